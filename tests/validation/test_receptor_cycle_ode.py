"""The receptor cycle of models/receptor_cycle_physiological.yaml, well mixed, against its
rate equations (docs/validation.md, "The receptor cycle against its rate equations").

A small cell with one endosome at its centre, in a reflective box; diffusion fast
against the reactions (a ligand crosses the box, a vesicle the cell, many times per
reaction), so every pair rule acts at the rate of a uniform pair density: per pair
(1 - exp(-rate dt)) / dt x (the reaction reach's volume / the volume the pair's free
body can take). The counts then follow an ODE, solved with scipy's solve_ivp:

    L + R -> C (binding)          C -> L + R (unbinding)      C -> V (budding)
    V -> Ce (fusion; the reach grows with the endosome)       Ce -> Re + Li (dissociation)
    Li -> 0 (degradation)         Re -> R (recycling)

Each ensemble (nestsim.Simulation(..., replicas=R)) is compared with the ODE at several
times, z = (mean - ODE) / (standard error of the mean over replicas, its variance
floored at 1 count^2) within Z_BOUND, at two seeds; the cycle's late means (the
approach to its steady state, averaged over the last 40% of the run) at dt 1 and 2 us
agree within Z_BOUND. A deliberately wrong ODE (budding 1.3x) is rejected, so the check
can tell. What the ODE leaves out: a bud waits while a vesicle takes its place (~1% of
buds here), two ligands in one receptor's reach, vesicles excluding each other.
"""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import nestsim

Z_BOUND = 5.0     # 4 times x 7 counts x 2 dt per seed; |t| > 5 with 19 dof: p ~ 1e-4 each
REPLICAS = 20
T_END = 4000.0    # us
EVERY = 100.0     # us between samples
CHECK_TIMES = (500.0, 1000.0, 2000.0, 4000.0)
SEEDS = (7, 8)

# Geometry (nm) and rates (/us) of the variant; the YAML below uses the same numbers.
BOX, CELL_R, CELL_Q = 600.0, 250.0, 8.0
ENDO_R, ENDO_Q, VES_R, VES_Q = 100.0, 6.0, 15.0, 8.0
LIG_R = 2.0
BIND_RADIUS, FUSE_RADIUS = 25.0, 30.0
RATES = dict(binding=0.02, unbinding=0.0002, budding=0.0012, fusion=0.033,
             dissociation=0.0012, degradation=0.0012, recycling=0.0012)
RECEPTORS, LIGANDS = 100, 200

MODEL = """\
nestsim: 1
units: {{length: nm, time: us}}
box: {{size: [{box}, {box}, {box}], boundary: reflective}}
simulation: {{dt: {dt}, steps: {steps}, seed: 1, output: {{every: 100, file: cycle.h5}}}}
compartments:
  cell:     {{radius: {cell_r}, thickness: {cell_q}, diffusion: 0}}
  endosome: {{radius: {endo_r}, thickness: {endo_q}, diffusion: 0}}
  vesicle:  {{radius: {ves_r}, thickness: {ves_q}, diffusion: 200}}
species:
  ligand:    {{radius: {lig_r}, diffusion: 100}}
  receptor:  {{radius: 3, diffusion: 0.1, membrane: true}}
  complex:   {{radius: 3.5, diffusion: 0.1, membrane: true}}
  ligand_in: {{radius: 2, diffusion: 20}}
interactions: {{contacts: hard}}
place:
  - {{compartment: cell, at: [{c}, {c}, {c}]}}
  - {{compartment: endosome, at: [{c}, {c}, {c}]}}
  - {{species: receptor, count: {receptors}, on: cell}}
  - {{species: ligand, count: {ligands}, outside: cell}}
reactions:
  - {{name: binding,      rule: "ligand outside cell + receptor on cell -> complex on cell", rate: {binding}, radius: {bind_radius}}}
  - {{name: unbinding,    rule: "complex on cell -> ligand outside cell + receptor on cell", rate: {unbinding}}}
  - {{name: budding,      rule: "complex on cell -> vesicle + complex on vesicle", rate: {budding}}}
  - {{name: fusion,       rule: "vesicle + endosome -> endosome", rate: {fusion}, radius: {fuse_radius}}}
  - {{name: dissociation, rule: "complex on endosome -> receptor on endosome + ligand_in in endosome", rate: {dissociation}}}
  - {{name: degradation,  rule: "ligand_in in endosome -> 0", rate: {degradation}}}
  - {{name: recycling,    rule: "receptor on endosome -> receptor on cell", rate: {recycling}}}
"""

# The counts compared, as (kind, location) of nestsim.Frame.counts(), and "degraded"
# (the degradation rule's events).
COUNTS = (("receptor", "on cell"), ("complex", "on cell"), ("complex", "on vesicle"),
          ("complex", "on endosome"), ("receptor", "on endosome"), ("ligand", "outside"),
          ("degraded", ""))


def model_text(dt):
    return MODEL.format(box=BOX, dt=dt, steps=int(round(T_END / dt)), cell_r=CELL_R,
                        cell_q=CELL_Q, endo_r=ENDO_R, endo_q=ENDO_Q, ves_r=VES_R,
                        ves_q=VES_Q, lig_r=LIG_R, c=BOX / 2, receptors=RECEPTORS,
                        ligands=LIGANDS, bind_radius=BIND_RADIUS, fuse_radius=FUSE_RADIUS,
                        **RATES)


def ball(r):
    return 4.0 / 3.0 * math.pi * r ** 3


def lens(big, small, d):
    """Volume of the intersection of two balls (radii big, small, centres d apart)."""
    if d >= big + small:
        return 0.0
    if d <= big - small:
        return ball(small)
    return (math.pi * (big + small - d) ** 2
            * (d * d + 2 * d * small - 3 * small * small + 2 * d * big + 6 * small * big
               - 3 * big * big) / (12 * d))


def per_step(rate, dt):
    """A rule's probability per step, as a rate: (1 - exp(-rate dt)) / dt."""
    return -math.expm1(-rate * dt) / dt


def rate_equations(dt, budding_factor=1.0):
    """The ODE's right-hand side at step dt."""
    # Binding: the ligand's centre lies outside the cell (|x| >= r_cell + r_lig) and in
    # the box ([r_lig, edge - r_lig] on each axis: the walls reflect its ball); a
    # receptor's centre sits on the mid-surface, r_cell - q/2.
    free = (BOX - 2 * LIG_R) ** 3 - ball(CELL_R + LIG_R)
    reach = ball(BIND_RADIUS) - lens(CELL_R + LIG_R, BIND_RADIUS, CELL_R - CELL_Q / 2)
    k_bind = per_step(RATES["binding"], dt) * reach / free
    # Fusion: a vesicle's centre lies in the cell's lumen (|x| <= l_cell - r_ves) and off
    # the endosome (>= r_endo + r_ves), in reach within FUSE_RADIUS more; each fusion adds
    # the vesicle's lumen to the endosome's (l^3 sums).
    outer = CELL_R - CELL_Q - VES_R
    l0, lv = ENDO_R - ENDO_Q, VES_R - VES_Q
    p_fuse = per_step(RATES["fusion"], dt)

    def k_fuse(fused):
        r_endo = (l0 ** 3 + fused * lv ** 3) ** (1.0 / 3.0) + ENDO_Q
        near = r_endo + VES_R
        return p_fuse * (ball(near + FUSE_RADIUS) - ball(near)) / (ball(outer) - ball(near))

    k = {name: per_step(rate, dt) for name, rate in RATES.items()}
    k["budding"] *= budding_factor

    def rhs(_, y):
        L, R, C, V, Ce, Re, Li, _deg, F = y
        bind, unbind = k_bind * L * R, k["unbinding"] * C
        bud, fuse = k["budding"] * C, k_fuse(F) * V
        dis, deg, rec = k["dissociation"] * Ce, k["degradation"] * Li, k["recycling"] * Re
        return [unbind - bind, unbind - bind + rec, bind - unbind - bud, bud - fuse,
                fuse - dis, dis - rec, dis - deg, deg, fuse]
    return rhs


def solve(dt, times, budding_factor=1.0):
    """The ODE's counts at `times`, in the order of COUNTS."""
    y0 = [LIGANDS, RECEPTORS, 0, 0, 0, 0, 0, 0, 0]
    sol = solve_ivp(rate_equations(dt, budding_factor), (0.0, T_END), y0, t_eval=times,
                    rtol=1e-8, atol=1e-8, method="LSODA")
    L, R, C, V, Ce, Re, _Li, deg, _F = sol.y
    return np.stack([R, C, V, Ce, Re, L, deg], axis=1)  # (times, counts)


def run_ensemble(dt, seed):
    """Counts (replicas, samples, COUNTS) every EVERY us, and the sample times."""
    sim = nestsim.Simulation(nestsim.Model.from_yaml(model_text(dt)), seed=seed,
                             replicas=REPLICAS, workers=2)
    every = int(round(EVERY / dt))
    samples, times = [], []
    for step in range(0, int(round(T_END / dt)) + 1, every):
        if step > 0:
            sim.run(every)
        row = []
        for r in range(REPLICAS):
            counts = sim.counts(replica=r)
            degraded = sim.events(replica=r)["degradation"]
            row.append([degraded if kind == "degraded" else counts.get(kind, {}).get(where, 0)
                        for kind, where in COUNTS])
        samples.append(row)
        times.append(step * dt)
    return np.transpose(np.array(samples, dtype=float), (1, 0, 2)), np.array(times)


def z_scores(counts, expected):
    """(mean - expected) / standard error over replicas; variance floored at 1."""
    mean = counts.mean(axis=0)
    var = np.maximum(counts.var(axis=0, ddof=1), 1.0)
    return (mean - expected) / np.sqrt(var / counts.shape[0])


@pytest.fixture(scope="module", params=SEEDS)
def ensembles(request):
    runs = {dt: run_ensemble(dt, request.param) for dt in (1.0, 2.0)}
    runs["seed"] = request.param
    return runs


def report(name, measured, theory, se, seed):
    """The suite's machine-readable line (tools/validation_table.py)."""
    print("VALIDATION|%s|%.7g|%.7g|%.4g|%.3f|%d"
          % (name, measured, theory, se, (measured - theory) / se, seed))


@pytest.mark.parametrize("dt", [1.0, 2.0])
def test_ensemble_mean_follows_the_rate_equations(ensembles, dt):
    counts, times = ensembles[dt]
    at = [int(np.argmin(np.abs(times - t))) for t in CHECK_TIMES]
    expected = solve(dt, np.array(CHECK_TIMES))
    z = z_scores(counts[:, at, :], expected)
    worst = np.unravel_index(np.argmax(np.abs(z)), z.shape)
    print("receptor cycle, dt %g: max |z| %.2f at t %g, %s (bound %.1f)"
          % (dt, abs(z[worst]), CHECK_TIMES[worst[0]], COUNTS[worst[1]], Z_BOUND))
    final = counts[:, at[-1], 0]  # receptors on the cell at the end
    report("cycle_ode_receptors_dt%g" % dt, final.mean(), expected[-1, 0],
           math.sqrt(max(final.var(ddof=1), 1.0) / len(final)), ensembles["seed"])
    assert np.all(np.abs(z) < Z_BOUND), (z, counts[:, at, :].mean(axis=0), expected)
    # The cycle ran: receptors were internalised, reached the endosome and came back,
    # and ligand was degraded.
    assert expected[-1, 6] > 20 and counts[:, at[-1], 6].mean() > 20
    # The check can tell: budding 1.3x as fast is rejected.
    wrong = z_scores(counts[:, at, :], solve(dt, np.array(CHECK_TIMES), budding_factor=1.3))
    assert np.max(np.abs(wrong)) > Z_BOUND


def test_steady_state_does_not_depend_on_the_step(ensembles):
    late = {}
    for dt in (1.0, 2.0):
        counts, times = ensembles[dt]
        window = times >= 0.6 * T_END
        late[dt] = counts[:, window, :].mean(axis=1)  # per replica: its late mean
    a, b = late[1.0], late[2.0]
    se = np.sqrt(np.maximum(a.var(axis=0, ddof=1), 0.25) / len(a)
                 + np.maximum(b.var(axis=0, ddof=1), 0.25) / len(b))
    z = (a.mean(axis=0) - b.mean(axis=0)) / se
    print("receptor cycle, late means dt 1 vs 2: max |z| %.2f (bound %.1f)"
          % (np.max(np.abs(z)), Z_BOUND))
    report("cycle_steady_receptors_dt1_vs_dt2", a[:, 0].mean(), b[:, 0].mean(), se[0],
           ensembles["seed"])
    assert np.all(np.abs(z) < Z_BOUND), (z, a.mean(axis=0), b.mean(axis=0))
