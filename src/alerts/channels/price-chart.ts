// A firing's price chart, pure: a text sparkline for chat and a small PNG step chart for e-mail (no image library needed).
import { crc32, deflateSync } from 'node:zlib';
import type { ChartPoint } from '../rules/firing.js';

const BARS = '▁▂▃▄▅▆▇█';

/**
 * One bar per price change, oldest first (the last `max`): the shape of the history at a glance.
 * A flat history is a row of the middle bar, not of the lowest (which would read as "cheap").
 */
export function sparkline(points: readonly ChartPoint[], max = 24): string {
  const prices = points.slice(-max).map((p) => p.price);
  if (prices.length === 0) return '';
  const low = prices.reduce((min, price) => Math.min(min, price), Infinity);
  const high = prices.reduce((max, price) => Math.max(max, price), -Infinity);
  return prices.map((price) => (high === low ? BARS[3] : BARS[Math.round(((price - low) / (high - low)) * (BARS.length - 1))])).join('');
}

export interface ChartImage {
  png: Uint8Array;
  width: number;
  height: number;
  /** What the chart shows, for the image's alt text. */
  alt: string;
}

const INK: Rgb = [29, 78, 216];
const LAST: Rgb = [220, 38, 38];
const GRID: Rgb = [226, 232, 240];
type Rgb = [number, number, number];

/**
 * The prices as a step chart over time (a price holds until the next change), the latest price
 * marked; null with fewer than two points, where a chart would say nothing. Same input, same bytes.
 */
export function priceChart(points: readonly ChartPoint[], until: string, size: { width: number; height: number } = { width: 240, height: 64 }): ChartImage | null {
  if (points.length < 2) return null;
  const { width, height } = size;
  const pad = 4;
  const pixels = new Uint8Array(width * height * 3).fill(255);
  const set = (x: number, y: number, color: Rgb) => {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    pixels.set(color, (y * width + x) * 3);
  };
  for (let x = 0; x < width; x++) set(x, height - pad, GRID);

  const times = points.map((p) => Date.parse(p.at));
  const start = times[0] as number;
  const end = Math.max(Date.parse(until), times.at(-1) as number) || start + 1;
  const prices = points.map((p) => p.price);
  const low = prices.reduce((min, price) => Math.min(min, price), Infinity);
  const high = prices.reduce((max, price) => Math.max(max, price), -Infinity);
  const xOf = (t: number) => pad + Math.round(((t - start) / Math.max(end - start, 1)) * (width - 1 - 2 * pad));
  const yOf = (price: number) => (high === low ? Math.round(height / 2) : pad + Math.round(((high - price) / (high - low)) * (height - 1 - 2 * pad)));

  for (let i = 0; i < points.length; i++) {
    const y = yOf(prices[i] as number);
    const x0 = xOf(times[i] as number);
    const x1 = i + 1 < points.length ? xOf(times[i + 1] as number) : xOf(end);
    for (let x = x0; x <= x1; x++) thick(set, x, y, INK);
    if (i + 1 < points.length) {
      const next = yOf(prices[i + 1] as number);
      for (let y2 = Math.min(y, next); y2 <= Math.max(y, next); y2++) thick(set, x1, y2, INK);
    }
  }
  const lastX = xOf(times.at(-1) as number);
  const lastY = yOf(prices.at(-1) as number);
  for (let dx = -2; dx <= 2; dx++) for (let dy = -2; dy <= 2; dy++) if (dx * dx + dy * dy <= 5) set(lastX + dx, lastY + dy, LAST);

  const first = points[0] as ChartPoint;
  const alt = `Price history from ${first.at.slice(0, 10)}: ${points.length} prices between ${low} and ${high}, now ${prices.at(-1)}.`;
  return { png: encodePng(width, height, pixels), width, height, alt };
}

function thick(set: (x: number, y: number, color: Rgb) => void, x: number, y: number, color: Rgb): void {
  set(x, y, color);
  set(x, y + 1, color);
}

/** A truecolour PNG: signature, IHDR, one IDAT of unfiltered scanlines, IEND. */
function encodePng(width: number, height: number, rgb: Uint8Array): Uint8Array {
  const raw = new Uint8Array((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 3 + 1)] = 0; // filter: none
    raw.set(rgb.subarray(y * width * 3, (y + 1) * width * 3), y * (width * 3 + 1) + 1);
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, truecolour, deflate, no filter method, no interlace
  return concat([
    Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', new Uint8Array(0)),
  ]);
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  const typeAndData = out.subarray(4, 8 + data.length);
  typeAndData.set(Buffer.from(type, 'latin1'));
  typeAndData.set(data, 4);
  view.setUint32(8 + data.length, crc32(typeAndData));
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
