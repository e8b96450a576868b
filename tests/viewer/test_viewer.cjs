// `nestsim view` in a real browser (Debian's chromium, headless, driven by
// playwright-core) on a trajectory of the default model. What the page shows is
// compared with the file as h5py reads it (reference.py).
//
// usage: node test_viewer.cjs NESTSIM OUT.h5 WORKDIR
'use strict';
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { startView, stopView, launchBrowser, closeBrowser, waitForFrame } = require('./browser.cjs');
const { measure, differingFraction } = require('./pixels.cjs');

const [nestsim, trajectory, workdir] = process.argv.slice(2);
const reference = JSON.parse(execFileSync('/usr/bin/python3',
  [path.join(__dirname, 'reference.py'), trajectory], { encoding: 'utf8' }));
const last = reference.steps.length - 1;

const checks = [];
function check(name, fn) { checks.push({ name, fn }); }

async function legendCounts(page) {
  return page.$$eval('#legend tr[data-kind]', (rows) => rows.map((r) => ({
    name: r.dataset.kind, count: Number(r.querySelector('.count').textContent.replace(/,/g, '')),
  })));
}

const color = (page, name) => page.evaluate((n) => window.nestsimViewer.kindColor(n), name);

check('the canvas is not blank', async (page) => {
  const m = await measure(page);
  assert.ok(m.total - m.background > 0.02 * m.total,
    `only ${m.total - m.background} of ${m.total} pixels differ from the background`);
  return `${m.total - m.background} of ${m.total} pixels drawn`;
});

check('the legend lists the kinds with the frame\'s counts', async (page) => {
  for (const frame of [0, last]) {
    await page.evaluate((i) => window.nestsimViewer.show(i), frame);
    await waitForFrame(page, frame);
    const rows = await legendCounts(page);
    assert.deepEqual(rows.map((r) => r.name), reference.kinds);
    assert.deepEqual(rows.map((r) => r.count), reference.counts[frame], `frame ${frame}`);
  }
  await page.evaluate(() => window.nestsimViewer.show(0));
  await waitForFrame(page, 0);
});

check('the clock gives the step and the model time with its unit', async (page) => {
  const text = await page.textContent('#clock');
  assert.match(text, new RegExp(`step ${reference.steps[0].toLocaleString('en-US')}\\b`));
  assert.match(text, new RegExp(`t = 0 ${reference.time_unit}`));
});

check('scrubbing to another frame changes the picture and the clock', async (page) => {
  const before = await measure(page, { keep: true });
  await page.$eval('#scrub', (el, v) => { el.value = String(v); el.dispatchEvent(new Event('input')); }, last);
  await waitForFrame(page, last);
  const after = await measure(page, { keep: true });
  const changed = differingFraction(before, after);
  assert.ok(changed > 0.003, `only ${(100 * changed).toFixed(3)}% of the pixels changed`);
  const text = await page.textContent('#clock');
  assert.match(text, new RegExp(`frame ${last} / ${last} · step ${reference.steps[last].toLocaleString('en-US')}\\b`));
  await page.click('#step-back');
  await waitForFrame(page, last - 1);
  await page.click('#step-forward');
  await waitForFrame(page, last);
  await page.evaluate(() => window.nestsimViewer.show(0));
  await waitForFrame(page, 0);
  return `${(100 * changed).toFixed(1)}% of the pixels changed`;
});

check('hiding a kind removes its colour from the pixels', async (page) => {
  const ligand = await color(page, 'ligand');
  const shown = await measure(page, { lit: [ligand] });
  assert.ok(shown.lit[0] > 100, `ligand's colour on ${shown.lit[0]} pixels only`);
  await page.click('#legend tr[data-kind="ligand"]');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const hidden = await measure(page, { lit: [ligand] });
  assert.ok(hidden.lit[0] <= 0.01 * shown.lit[0],
    `ligand's colour on ${hidden.lit[0]} pixels after hiding it (${shown.lit[0]} before)`);
  assert.ok(await page.$eval('#legend tr[data-kind="ligand"]', (r) => r.classList.contains('hidden')));
  await page.click('#legend tr[data-kind="ligand"]');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const again = await measure(page, { lit: [ligand] });
  assert.equal(again.lit[0], shown.lit[0], 'showing it again restores the picture');
  return `ligand's colour on ${shown.lit[0]} pixels, then ${hidden.lit[0]}`;
});

check('the clipping plane reveals the bodies in the cell and the membrane\'s cut', async (page) => {
  // Crowders live in the cell only: behind its shell, their colour is veiled.
  const crowder = await color(page, 'crowder');
  const cell = await color(page, 'cell');
  const closed = await measure(page, { lit: [crowder], flat: [[cell, 0.75]] });
  await page.evaluate(() => window.nestsimViewer.setClip(true, 2, 0.5));
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const open = await measure(page, { lit: [crowder], flat: [[cell, 0.75]] });
  assert.ok(open.lit[0] > 3 * closed.lit[0] + 100,
    `crowder pixels: ${closed.lit[0]} before the cut, ${open.lit[0]} after`);
  assert.equal(closed.flat[0], 0, 'no membrane cross-section without the cut');
  assert.ok(open.flat[0] > 200, `the cell membrane's cross-section covers ${open.flat[0]} pixels`);
  await page.evaluate(() => window.nestsimViewer.setClip(false, 2, 0.5));
  return `crowder pixels ${closed.lit[0]} -> ${open.lit[0]}, membrane cut ${open.flat[0]} pixels`;
});

check('budding and fusion events are marked on the timeline', async (page) => {
  const marks = await page.$$eval('#markers .marker', (m) => m.map((x) => x.className));
  const meta = await page.evaluate(() => window.nestsimViewer.meta);
  const expected = meta.reactions.filter((r) => r.role)
    .reduce((n, r) => n + r.events.filter((e) => e > 0).length, 0);
  assert.ok(meta.reactions.some((r) => r.name === 'budding' && r.role === 'budding'));
  assert.ok(meta.reactions.some((r) => r.name === 'fusion' && r.role === 'fusion'));
  assert.equal(marks.length, expected);
  assert.ok(expected > 0, 'no budding or fusion event in the trajectory');
  return `${marks.length} marks`;
});

check('the screenshot button saves a PNG', async (page) => {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#screenshot')]);
  const file = path.join(workdir, 'screenshot.png');
  await download.saveAs(file);
  const head = fs.readFileSync(file).subarray(0, 8);
  assert.deepEqual([...head], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
});

async function pageChecks(context) {
  const view = await startView(nestsim, trajectory);
  try {
    const page = await context.newPage();
    const offline = [];
    page.on('request', (r) => { if (!r.url().startsWith(view.url)) offline.push(r.url()); });
    // The finest spheres: the page would coarsen them where pictures are slow.
    await page.goto(`${view.url}?detail=0`);
    await waitForFrame(page, 0);
    for (const { name, fn } of checks) {
      const detail = await fn(page);
      console.log(`ok   ${name}${detail ? ` (${detail})` : ''}`);
    }
    assert.deepEqual(offline, [], 'the page fetched nothing but the local server');
    console.log('ok   the page fetched nothing but from 127.0.0.1');
    await page.close();
  } finally {
    const { code, signal } = await stopView(view);
    assert.ok(code === 0, `nestsim view after SIGTERM: exit ${code} ${signal || ''}`);
  }
}

// A file that goes bad while it is shown (replaced by something else) is said so on the
// page; a missing or bad file given on the command line is an error there.
async function badFileChecks(context) {
  const copy = path.join(workdir, 'replaced.h5');
  fs.copyFileSync(trajectory, copy);
  const view = await startView(nestsim, copy);
  try {
    const page = await context.newPage();
    await page.goto(view.url);
    await waitForFrame(page, 0);
    fs.writeFileSync(copy, 'this is not a trajectory\n');
    await page.waitForSelector('#error:not([hidden])', { timeout: 20000 });
    const text = await page.textContent('#error');
    assert.ok(text.includes(copy) && /not an HDF5 file/.test(text), `the page says: ${text}`);
    console.log('ok   a trajectory that goes bad is reported on the page');
    await page.close();
  } finally {
    await stopView(view);
  }
  for (const [file, why] of [[path.join(workdir, 'missing.h5'), /cannot open|No such file/],
    [copy, /not an HDF5 file/]]) {
    const r = spawnSync(nestsim, ['view', file, '--port', '0'], { encoding: 'utf8', timeout: 20000 });
    assert.equal(r.status, 2, `nestsim view ${file}: exit ${r.status}`);
    assert.ok(r.stderr.includes(file) && why.test(r.stderr), `stderr: ${r.stderr}`);
  }
  console.log('ok   a missing or bad file: exit 2 and a message naming it');
}

async function main() {
  fs.mkdirSync(workdir, { recursive: true });
  const context = await launchBrowser();
  try {
    await pageChecks(context);
    await badFileChecks(context);
  } finally {
    await closeBrowser(context);
  }
}

main().catch((e) => { console.error(`FAIL ${e.stack || e}`); process.exit(1); });
