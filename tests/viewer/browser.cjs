// Shared by the viewer's browser tests and its frame-rate benchmark: `nestsim view` on
// a trajectory, and Debian's chromium driven by playwright-core (headless, software
// WebGL, a fresh profile, nothing fetched from the network).
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// The page and its test driver come from the viewer's build (viewer/build_page.cmake),
// which may have been skipped: say so rather than fail on a missing module.
const pageDir = process.env.NESTSIM_VIEWER_DIR;
if (pageDir && !fs.existsSync(path.join(pageDir, 'index.html'))) {
  console.error(`the page of nestsim view is not built (${pageDir}/index.html is missing): `
    + 'build it with `cmake --build BUILD_DIR --target nestsim_viewer` (needs node, npm and '
    + 'the npm registry)');
  process.exit(1);
}
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.NESTSIM_CHROMIUM || '/usr/bin/chromium';

// Starts `nestsim view FILE --port 0`; resolves with { url, process } once it listens.
function startView(nestsim, file, extra = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(nestsim, ['view', file, '--port', '0', ...extra],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    const timer = setTimeout(() => reject(new Error(`nestsim view did not start: ${out}${err}`)), 30000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/at (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) { clearTimeout(timer); resolve({ url: m[1], process: child }); }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`nestsim view exited with ${code}: ${out}${err}`));
    });
  });
}

function stopView(view) {
  view.process.removeAllListeners('exit');
  return new Promise((resolve) => {
    view.process.on('exit', (code, signal) => resolve({ code, signal }));
    view.process.kill('SIGTERM');
  });
}

// gpu: chromium's hardware GL (ANGLE on Vulkan) instead of software WebGL (SwiftShader).
async function launchBrowser(width = 1000, height = 750, { gpu = false } = {}) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'nestsim-chromium-'));
  const gl = gpu
    ? ['--use-angle=vulkan', '--enable-features=Vulkan', '--ignore-gpu-blocklist']
    : ['--disable-gpu', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'];
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width, height },
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', ...gl],
  });
  context.profile = profile;
  return context;
}

async function closeBrowser(context) {
  await context.close();
  fs.rmSync(context.profile, { recursive: true, force: true });
}

// Waits until the page shows frame `index` (or any frame when undefined).
async function waitForFrame(page, index, timeout = 60000) {
  await page.waitForFunction((i) => {
    const v = window.nestsimViewer;
    return v && v.ready && !v.app.loading && (i === undefined ? v.frameIndex >= 0 : v.frameIndex === i);
  }, index, { timeout });
  // Two animation frames: the canvas holds the new picture.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

module.exports = { startView, stopView, launchBrowser, closeBrowser, waitForFrame, CHROMIUM };
