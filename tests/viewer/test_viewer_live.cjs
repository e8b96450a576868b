// `nestsim view` on a trajectory that a `nestsim run` is still writing: the page opens,
// new frames appear on it as they are written (shown at the last frame, it follows the
// frames that come), and the run
// is not disturbed (it stops on Ctrl-C as it always does, its file complete).
//
// usage: node test_viewer_live.cjs NESTSIM OUT.h5 WORKDIR   (OUT.h5 unused: the test
// writes its own)
'use strict';
const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { startView, stopView, launchBrowser, closeBrowser, waitForFrame } = require('./browser.cjs');

const [nestsim, , workdir] = process.argv.slice(2);
const model = path.join(__dirname, '..', '..', 'models', 'default.yaml');
const live = path.join(workdir, 'live.h5');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startViewWhenReady(deadline) {
  for (;;) {
    try {
      return await startView(nestsim, live);
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await sleep(500);
    }
  }
}

async function main() {
  fs.mkdirSync(workdir, { recursive: true });
  const run = spawn(nestsim, ['run', model, '--steps', '60000', '-o', live, '--force'],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, OMP_NUM_THREADS: '1' } });
  let runLog = '';
  run.stderr.on('data', (d) => { runLog += d; });
  const runExit = new Promise((resolve) => run.on('exit', (code, signal) => resolve({ code, signal })));
  const context = await launchBrowser();
  let view = null;
  try {
    view = await startViewWhenReady(Date.now() + 60000);
    const page = await context.newPage();
    await page.goto(view.url);
    await waitForFrame(page, undefined, 60000);
    // The page opens at frame 0; at the last frame, it follows the frames that come.
    const first = await page.evaluate(() => window.nestsimViewer.meta.frames);
    await page.evaluate((n) => window.nestsimViewer.show(n - 1), first);
    await waitForFrame(page, first - 1);
    // Frames come every 500 steps, about 2 s apart on one core.
    await page.waitForFunction((n) => {
      const v = window.nestsimViewer;
      return v.meta.frames >= n + 2 && v.frameIndex === v.meta.frames - 1 && !v.error;
    }, first, { timeout: 120000, polling: 250 });
    const shown = await page.evaluate(() => window.nestsimViewer.frameIndex);
    console.log(`ok   new frames appear while the run writes them (${first} frames at first, frame ${shown} shown)`);
    await page.close();
  } finally {
    if (view) await stopView(view);
    await closeBrowser(context);
    run.kill('SIGINT');
  }
  const { code } = await runExit;
  assert.equal(code, 130, `the run after Ctrl-C: exit ${code}\n${runLog}`);
  const check = spawnSync(nestsim, ['export', live, '--format', 'xyz', '--frames', '0', '-o', '-'],
    { encoding: 'utf8' });
  assert.equal(check.status, 0, `the run's file afterwards: ${check.stderr}`);
  console.log('ok   the run stopped normally on Ctrl-C and its file reads back');
}

main().catch((e) => { console.error(`FAIL ${e.stack || e}`); process.exit(1); });
