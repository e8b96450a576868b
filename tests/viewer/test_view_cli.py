#!/usr/bin/python3
"""`nestsim view`'s command line without a browser: what it prints when it serves, what
its HTTP API returns (against h5py), and its answers to bad input and a taken port.

usage: test_view_cli.py NESTSIM OUT.h5 WORKDIR
"""
import json
import os
import re
import signal
import struct
import subprocess
import sys
import urllib.error
import urllib.request

import h5py
import numpy as np


def start(nestsim, *args):
    """A running `nestsim view` and its address."""
    p = subprocess.Popen([nestsim, "view", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    for line in p.stdout:
        m = re.search(r"at (http://127\.0\.0\.1:(\d+)/)", line)
        if m:
            return p, m.group(1), int(m.group(2))
    raise AssertionError("nestsim view did not print its address: " + p.stderr.read())


def stop(p):
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=20) == 0, p.returncode


def check_api(url, trajectory):
    meta = json.load(urllib.request.urlopen(url + "api/meta"))
    with h5py.File(trajectory, "r") as f:
        frames = len(f["/particles/bodies/position/value"])
        assert meta["frames"] == frames
        assert meta["steps"] == [int(s) for s in f["/particles/bodies/position/step"][()]]
        last = frames - 1
        body = urllib.request.urlopen(url + "api/frame/%d" % last).read()
        magic, version, index, live, sent, stride = struct.unpack_from("<6I", body, 0)
        step, time = struct.unpack_from("<2d", body, 24)
        ids = f["/particles/bodies/id/value"][last]
        assert (magic, version, index, stride) == (0x4656534E, 1, last, 1)
        assert live == sent == int((ids >= 0).sum())
        assert step == f["/particles/bodies/position/step"][last]
        # Bodies are sent compartments first: compare as sets of (id, position).
        (kinds,) = struct.unpack_from("<I", body, 40)
        at = 44 + 4 * kinds
        position = np.frombuffer(body, "<f4", 3 * sent, at).reshape(sent, 3)
        sent_ids = np.frombuffer(body, "<u4", sent, at + 20 * sent)
        order = np.argsort(sent_ids)
        live_ids = ids[ids >= 0]
        live_position = f["/particles/bodies/position/value"][last][ids >= 0]
        expect = np.argsort(live_ids)
        assert np.array_equal(sent_ids[order], live_ids[expect])
        assert np.allclose(position[order], live_position[expect], rtol=1e-6, atol=1e-3)
    try:
        urllib.request.urlopen(url + "api/frame/%d" % frames)
        raise AssertionError("a frame past the end was served")
    except urllib.error.HTTPError as e:
        assert e.code == 500 and "no frame %d" % frames in json.load(e)["error"]


def expect_exit(nestsim, args, status, *fragments):
    r = subprocess.run([nestsim, "view", *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == status, (args, r.returncode, r.stderr)
    for fragment in fragments:
        assert fragment in r.stderr, (args, fragment, r.stderr)


def main():
    nestsim, trajectory, workdir = sys.argv[1:4]
    os.makedirs(workdir, exist_ok=True)
    p, url, port = start(nestsim, trajectory, "--port", "0")
    try:
        check_api(url, trajectory)
        print("ok   view: /api/meta and /api/frame agree with h5py")
        expect_exit(nestsim, [trajectory, "--port", str(port)], 1, "cannot listen", str(port))
        print("ok   view: a port in use gives exit 1 and says so")
    finally:
        stop(p)
    expect_exit(nestsim, [trajectory, "--port", "http"], 2, "--port", "'http'")
    expect_exit(nestsim, [trajectory, "--port", "70000"], 2, "--port")
    expect_exit(nestsim, [trajectory, "--colour"], 2, "unknown option '--colour'")
    expect_exit(nestsim, [], 2, "which trajectory")
    missing = os.path.join(workdir, "missing.h5")
    expect_exit(nestsim, [missing], 2, missing, "cannot open")
    print("ok   view: bad options and a missing file give exit 2")


if __name__ == "__main__":
    main()
