"""nestsim.Model: the loader of `nestsim run` (same schema, same located errors), keys
set and read by dotted path."""
import os

import pytest

import nestsim
from conftest import SMALL_MODEL, SOURCE_DIR, assert_same_datasets, run_cli


def test_load_gives_the_files_values():
    m = nestsim.Model.load(os.path.join(SOURCE_DIR, "models", "receptor_recycling.yaml"))
    assert m["simulation.dt"] == 0.002
    assert m["box.size"] == [800, 800, 800]
    assert m["reactions.binding.rate"] == 20
    assert m["reactions.0.name"] == "binding"
    assert m.steps == 60000 and m.seed == 2017
    assert m.kinds[:4] == ["cell", "lysosome", "ilv", "vesicle"]
    assert "binding" in m.reactions


def test_set_any_key_changes_the_parsed_model():
    m = nestsim.Model.from_yaml(SMALL_MODEL, "small.yaml")
    m.set("simulation.dt", 0.001)
    m["species.ligand.diffusion"] = 40
    m["reactions.binding.rate"] = 7.5
    m["place.5.count"] = 10
    m["simulation.output.every"] = 5
    m["medium.membrane_viscosity"] = 0.2  # a key the text did not give
    assert m.dt == 0.001 and m.output_every == 5
    again = nestsim.Model.from_yaml(m.to_yaml(), "again.yaml")  # the text round-trips
    for key, value in [("simulation.dt", 0.001), ("species.ligand.diffusion", 40),
                       ("reactions.binding.rate", 7.5), ("place.5.count", 10),
                       ("medium.membrane_viscosity", 0.2)]:
        assert again[key] == value and m[key] == value


def test_floats_round_trip_exactly():
    m = nestsim.Model.from_yaml(SMALL_MODEL)
    m["simulation.dt"] = 0.1 / 70
    assert m.dt == 0.1 / 70


def test_from_dict_is_the_same_model_as_the_text():
    d = nestsim.Model.from_yaml(SMALL_MODEL).to_dict()
    m = nestsim.Model.from_dict(d)
    assert m.to_dict() == d
    assert m.kinds == nestsim.Model.from_yaml(SMALL_MODEL).kinds


def test_a_run_of_a_set_model_equals_the_cli_with_the_edited_file(tmp_path, nestsim_binary):
    m = nestsim.Model.from_yaml(SMALL_MODEL, str(tmp_path / "edited.yaml"))
    m["simulation.steps"] = 40
    m["reactions.binding.rate"] = 50
    (tmp_path / "edited.yaml").write_text(m.to_yaml())
    sim = nestsim.Simulation(m, output=str(tmp_path / "py.h5"))
    sim.run()
    sim.close()
    run_cli(nestsim_binary, "run", tmp_path / "edited.yaml", "-o", tmp_path / "cli.h5")
    assert_same_datasets(tmp_path / "py.h5", tmp_path / "cli.h5")


# Errors: the CLI's message, and the location as attributes.
def test_error_in_a_file_is_located_as_the_cli_says(tmp_path, nestsim_binary):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SMALL_MODEL.replace("radius: 200, thickness: 8", "radius: -200, thickness: 8"))
    with pytest.raises(nestsim.ModelError) as e:
        nestsim.Model.load(str(bad))
    cli = run_cli(nestsim_binary, "run", bad, "-o", tmp_path / "x.h5", check=False)
    assert cli.returncode == 2
    assert str(e.value) == cli.stderr.strip()
    assert e.value.file == str(bad)
    assert e.value.line == 11 and e.value.column == 22
    assert e.value.key == "compartments.cell.radius"
    assert isinstance(e.value, ValueError) and isinstance(e.value, nestsim.InputError)


def test_missing_file(tmp_path):
    with pytest.raises(nestsim.ModelError) as e:
        nestsim.Model.load(str(tmp_path / "none.yaml"))
    assert "cannot open the model file" in str(e.value) and e.value.line == 0


@pytest.mark.parametrize("text, key", [
    ("nestsim: 1\nbox: {size: [1, 2]}\n", "box.size"),
    ("nestsim: 2\n", "nestsim"),
    ("nestsim: 1\nbogus: 3\n", "bogus"),
])
def test_errors_in_text(text, key):
    with pytest.raises(nestsim.ModelError) as e:
        nestsim.Model.from_yaml(text, "t.yaml")
    assert e.value.key == key and e.value.file == "t.yaml" and e.value.line >= 1


def test_yaml_syntax_error():
    with pytest.raises(nestsim.ModelError) as e:
        nestsim.Model.from_yaml("nestsim: [1\n", "t.yaml")
    assert "YAML syntax" in str(e.value) and e.value.line >= 1


def test_from_dict_errors_name_the_key():
    d = nestsim.Model.from_yaml(SMALL_MODEL).to_dict()
    d["species"]["ligand"]["radius"] = "big"
    with pytest.raises(nestsim.ModelError) as e:
        nestsim.Model.from_dict(d)
    assert e.value.key == "species.ligand.radius" and e.value.file == "<dict>"
    with pytest.raises(TypeError):
        nestsim.Model.from_dict({"nestsim": 1, "box": object()})
    with pytest.raises(TypeError):
        nestsim.Model.from_dict({1: 2})


def test_a_bad_value_is_refused_and_the_model_kept():
    m = nestsim.Model.from_yaml(SMALL_MODEL, "small.yaml")
    before = m.to_yaml()
    with pytest.raises(nestsim.ModelError) as e:
        m["compartments.cell.radius"] = -3
    assert e.value.key == "compartments.cell.radius" and "expected a number > 0" in str(e.value)
    assert str(e.value) == ("small.yaml: compartments.cell.radius: expected a number > 0, got "
                            "'-3' (after setting compartments.cell.radius = -3)")
    assert e.value.file == "small.yaml" and e.value.line == 0
    with pytest.raises(nestsim.ModelError) as e:
        m["simulation.dt"] = 5.0  # too large for accurate contacts
    assert e.value.key == "simulation.dt" and "use dt <=" in str(e.value)
    with pytest.raises(nestsim.ModelError) as e:
        m["simulation.bogus"] = 1
    assert "bogus" in str(e.value)
    with pytest.raises(TypeError, match="simulation.seed: a model holds numbers, text, "
                                        "booleans, lists and dicts, not object"):
        m["simulation.seed"] = object()
    assert m.to_yaml() == before


@pytest.mark.parametrize("key, words", [
    ("reactions.nosuch.rate", "neither an index"),
    ("place.99.count", "neither an index"),
    ("simulation.dt.x", "not a map or a list"),
    ("", "empty key"),
    ("simulation..dt", "empty part"),
])
def test_bad_keys(key, words):
    m = nestsim.Model.from_yaml(SMALL_MODEL, "small.yaml")
    with pytest.raises(nestsim.ModelError) as e:
        m[key] = 1
    assert words in str(e.value)


def test_get_of_a_key_not_given_is_a_key_error():
    m = nestsim.Model.from_yaml(SMALL_MODEL)
    with pytest.raises(KeyError):
        m["medium.membrane_viscosity"]
    with pytest.raises(nestsim.ModelError):
        m["reactions.nosuch.rate"]
