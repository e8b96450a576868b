"""The progress bar of Simulation.run: tqdm (a terminal bar, a widget in a notebook),
else a plain bar on stderr."""
import sys
import time


class _PlainBar:
    """A one-line bar on stderr, for when tqdm is not installed."""

    def __init__(self, first, last):
        self.first, self.last, self.start = first, last, time.monotonic()

    def __call__(self, step, last):
        done, total = step - self.first, max(1, last - self.first)
        elapsed = time.monotonic() - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        fill = int(30 * done / total + 0.5)
        sys.stderr.write("\r[%s%s] %3.0f%% step %d/%d  %.1f steps/s " % (
            "#" * fill, "." * (30 - fill), 100.0 * done / total, step, last, rate))
        sys.stderr.flush()

    def close(self):
        sys.stderr.write("\n")
        sys.stderr.flush()


class _TqdmBar:
    def __init__(self, tqdm, first, last, force):
        # Shown after a second (a short run shows nothing); on a non-terminal only when
        # asked for.
        self.bar = tqdm(total=last - first, unit="step", desc="nestsim",
                        delay=0 if force else 1.0, disable=False if force else None,
                        leave=True)
        self.first = first

    def __call__(self, step, last):
        self.bar.update(step - self.first - self.bar.n)

    def close(self):
        self.bar.close()


def make_bar(first, last, progress):
    """A callable(step, last) with close(), or None. progress: True always shows a bar,
    None one for runs of more than one chunk that last over a second, False none."""
    if progress is False or (progress is None and last - first <= 50):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _PlainBar(first, last) if progress else None
    return _TqdmBar(tqdm, first, last, bool(progress))
