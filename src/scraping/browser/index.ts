// The headless browser: a PageRenderer on Chromium (renderer.ts), built from a launcher, a context pool and a page driver.
export { createBrowserRenderer, type BrowserRenderer, type BrowserRendererOptions } from './renderer.js';
export { findChromium, type BrowserLogger, type Confinement } from './launcher.js';
