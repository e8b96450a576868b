"""nestsim.Simulation: a model's run, stepped from Python."""
import os

from . import _core
from ._analysis import Frame, location_names
from ._progress import make_bar


class Simulation:
    """A run of a model, as `nestsim run` does it.

    Simulation(model, seed=None, output=None, force=False, collision=None, steps=None,
               replicas=None, workers=None)

    model      a nestsim.Model, or the path of a model file
    seed       the random seed (default: the model's simulation.seed)
    output     an H5MD trajectory to write (default: none), by the writer of `nestsim
               run`: frame 0 now, a frame at every multiple of simulation.output.every,
               and one where each run() call ends; an existing file is refused unless
               force=True. The same model and seed give the file of `nestsim run`,
               bitwise.
    collision  "hollow" or "solid": the broad phase of the neighbour lists (default: the
               model's)
    steps      the run's total steps, what run() goes to by default (default: the
               model's simulation.steps)
    replicas   R independent copies of the model stepped together (default: one, no
               copies): replica r is the run with seed + r, bit for bit, and the copies
               run side by side on threads (on a GPU each on its own stream, so that
               small models fill the device). frames() gives every copy's state,
               frame(replica=r) one. No trajectory is written (output must be None; an
               ensemble with files is `nestsim ensemble`).
    workers    replicas run at a time (default: 8 on a GPU, one per core on a CPU)

    Simulation.resume(path) continues a trajectory from its last frame.
    """

    def __init__(self, model, seed=None, output=None, force=False, collision=None,
                 steps=None, replicas=None, workers=None, _core_simulation=None):
        self._replicas = None
        if _core_simulation is not None:
            self._sim = _core_simulation
            return
        if isinstance(model, (str, os.PathLike)):
            model = _core.Model.load(os.fspath(model))
        if replicas is not None:
            if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
                raise ValueError("replicas must be a whole number >= 1, not %r" % (replicas,))
            if output is not None:
                raise ValueError("output= writes one trajectory; replicas are not written "
                                 "(nestsim ensemble runs copies with a trajectory each)")
            if workers is not None and (not isinstance(workers, int) or workers < 1):
                raise ValueError("workers must be a whole number >= 1, not %r" % (workers,))
            self._sim = _core.Replicas(model, seed, replicas, collision, steps, workers or 0)
            self._replicas = replicas
            return
        if workers is not None:
            raise ValueError("workers= is for replicas=")
        if output is not None:
            output = os.fspath(output)
        self._sim = _core.Simulation(model, seed, output, force, collision, steps)

    @classmethod
    def resume(cls, path, collision=None):
        """Continues the trajectory `path` (written by nestsim run or a Simulation) from
        its last frame; run(n) appends n more steps, bitwise as an uninterrupted run."""
        return cls(None, _core_simulation=_core.Simulation.resume(os.fspath(path), collision))

    def run(self, steps=None, progress=None):
        """Advances `steps` steps (default: up to the run's total steps). The GIL is
        released while the engine works. Ctrl-C raises KeyboardInterrupt between chunks
        of steps; the simulation stays usable, and the trajectory then ends with the
        step reached. progress: True shows a bar (tqdm: a terminal or a notebook), None
        one for runs that last over a second, False none."""
        first = self._sim.step
        last = first + steps if steps is not None else max(first, self._sim.steps)
        bar = make_bar(first, last, progress)
        try:
            self._sim.run(steps, bar)
        finally:
            if bar is not None:
                bar.close()
        return self

    @property
    def step(self):
        return self._sim.step

    @property
    def time(self):
        """step x dt, in the model's time unit."""
        return self._sim.time

    @property
    def kinds(self):
        return self._sim.kinds

    @property
    def reactions(self):
        return self._sim.reactions

    @property
    def model(self):
        return self._sim.model

    @property
    def output(self):
        return None if self._replicas else (self._sim.output or None)

    @property
    def replicas(self):
        """The number of copies (1 for a Simulation without replicas=)."""
        return self._replicas or 1

    @property
    def box(self):
        return tuple(self._sim.box)

    @property
    def periodic(self):
        return self._sim.periodic

    @property
    def steps(self):
        return self._sim.steps

    @property
    def seed(self):
        return self._sim.seed

    @property
    def rejected_moves(self):
        """Moves rejected by the impermeability tests (with replicas: a list, per copy)."""
        return self._sim.rejected_moves

    def _raw_frame(self, replica):
        if self._replicas:
            return self._sim.frame(replica)
        if replica != 0:
            raise IndexError("replica %r of 1 (a Simulation without replicas=)" % (replica,))
        return self._sim.frame()

    def frame(self, slots=False, replica=0):
        """The state now (nestsim.Frame: numpy arrays over the bodies present; with
        slots=True over every slot, empty ones with id -1); with replicas, that of copy
        `replica`."""
        return Frame(self._raw_frame(replica), self._sim.kinds, slots)

    def frames(self, slots=False):
        """Every copy's state now, a list of nestsim.Frame (one without replicas=)."""
        raw = self._sim.frames() if self._replicas else [self._sim.frame()]
        return [Frame(d, self._sim.kinds, slots) for d in raw]

    def counts(self, replica=0):
        """Bodies by kind and location now: {kind: {"outside" | "in K" | "on K": n}}."""
        return self.frame(replica=replica).counts()

    def count_table(self, replica=0):
        """Bodies by kind and location now: (int array (kinds, locations), location
        names)."""
        return self.frame(replica=replica).count_table(), location_names(self._sim.kinds)

    def events(self, replica=0):
        """Events of each reaction rule since step 0: {rule: count}."""
        raw = self._raw_frame(replica)["reaction_events"]
        return {name: int(n) for name, n in zip(self._sim.reactions, raw)}

    def close(self):
        """Ends the trajectory with the state reached and closes it."""
        if not self._replicas:
            self._sim.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        if self._replicas:
            return "<nestsim.Simulation step %d of %d, %d replicas>" % (
                self.step, self.steps, self._replicas)
        return "<nestsim.Simulation step %d of %d, %s>" % (
            self.step, self.steps, "trajectory " + self.output if self.output else "no output")
