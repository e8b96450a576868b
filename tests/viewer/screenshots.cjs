// The README's and docs/viewer.md's pictures: the page on a trajectory at its first and
// last frame (the last with the clipping plane through the cell's centre), as a browser
// window of 1200 x 800 shows them.
//
// usage: NODE_PATH=BUILD/viewer/npm/node_modules node screenshots.cjs NESTSIM OUT.h5 DIR
'use strict';
const path = require('node:path');
const { startView, stopView, launchBrowser, closeBrowser, waitForFrame } = require('./browser.cjs');

async function main() {
  const [nestsim, trajectory, dir] = process.argv.slice(2);
  const context = await launchBrowser(1200, 800);
  const view = await startView(nestsim, trajectory);
  try {
    const page = await context.newPage();
    await page.goto(`${view.url}?detail=0`);
    await waitForFrame(page, 0);
    await page.screenshot({ path: path.join(dir, 'viewer-first-frame.png') });
    const last = await page.evaluate(() => window.nestsimViewer.meta.frames - 1);
    await page.evaluate((i) => window.nestsimViewer.show(i), last);
    await waitForFrame(page, last);
    await page.evaluate(() => window.nestsimViewer.setClip(true, 2, 0.5));
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.screenshot({ path: path.join(dir, 'viewer-last-frame.png') });
    console.log(`${dir}: viewer-first-frame.png, viewer-last-frame.png (frame ${last})`);
  } finally {
    await stopView(view);
    await closeBrowser(context);
  }
}

main().catch((e) => { console.error(`FAIL ${e.stack || e}`); process.exit(1); });
