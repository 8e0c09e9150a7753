// The price history as a uPlot chart: price and list price as steps over time, out-of-stock spans shaded.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { html } from './ui.js';

const UNAVAILABLE = new Set(['out_of_stock', 'discontinued']);

/**
 * uPlot's columns from history points (each a state from first_seen_at to last_seen_at): one x per
 * state start, and the last state's last sighting so the final step has a width. Times in seconds.
 */
export function chartData(points) {
  if (points.length === 0) return [[], [], [], []];
  const seconds = (iso) => Date.parse(iso) / 1000;
  const xs = points.map((p) => seconds(p.first_seen_at));
  const last = points[points.length - 1];
  const end = seconds(last.last_seen_at);
  const withEnd = (values) => (end > xs[xs.length - 1] ? [...values, values[values.length - 1]] : values);
  return [
    end > xs[xs.length - 1] ? [...xs, end] : xs,
    withEnd(points.map((p) => p.price)),
    withEnd(points.map((p) => p.list_price)),
    // 1 while out of stock, 0 otherwise: the stepped fill draws a band over exactly those spans.
    withEnd(points.map((p) => (UNAVAILABLE.has(p.availability) ? 1 : 0))),
  ];
}

/** Half the time axis around a history of one moment (a product seen once): a day in all. */
const LONE_MOMENT_HALF_SPAN_S = 12 * 3600;

/**
 * The time axis of a history of one moment (x values all equal): a day around it; null for a history
 * with a span, whose axis uPlot draws first sighting to last. uPlot pads a zero-width time scale by
 * 86400 / its `ms` option, 1000 days in seconds: a product first seen today was drawn over 2026-2029.
 */
export function loneMomentRange(xs) {
  if (xs.length === 0 || xs[0] !== xs[xs.length - 1]) return null;
  return [xs[0] - LONE_MOMENT_HALF_SPAN_S, xs[0] + LONE_MOMENT_HALF_SPAN_S];
}

/** The chart; the uPlot instance is kept on the element as `chart` (its data is what is plotted). */
export function PriceChart({ points, currency }) {
  const box = useRef(null);
  useEffect(() => {
    const element = box.current;
    if (!element || points.length === 0) return undefined;
    const stepped = uPlot.paths.stepped({ align: 1 });
    const width = () => Math.max(280, element.clientWidth);
    const data = chartData(points);
    const lone = loneMomentRange(data[0]);
    // uPlot sizes the x scale itself (at start, on a double click) and takes no range function for it
    // while it has data: each time it sets a lone moment's scale, this sets the day around it instead,
    // after the commit under way (a scale set inside it would wait for the next one).
    const keepLoneMoment = (u, key) => {
      if (key === 'x' && (u.scales.x.min !== lone[0] || u.scales.x.max !== lone[1])) queueMicrotask(() => u.setScale('x', { min: lone[0], max: lone[1] }));
    };
    const plot = new uPlot(
      {
        width: width(),
        height: 260,
        scales: { x: { time: true }, stock: { range: [0, 1] } },
        axes: [{}, { label: currency ?? 'price', size: 60 }, { scale: 'stock', show: false }],
        series: [
          {},
          { label: 'Price', stroke: '#1d4ed8', width: 2, paths: stepped, points: { show: true, size: 5 } },
          { label: 'List price', stroke: '#6b7280', dash: [6, 4], paths: stepped, spanGaps: false },
          { label: 'Out of stock', scale: 'stock', stroke: 'rgba(185, 28, 28, 0.0)', fill: 'rgba(185, 28, 28, 0.15)', paths: stepped, points: { show: false } },
        ],
        hooks: lone === null ? {} : { setScale: [keepLoneMoment] },
      },
      data,
      element,
    );
    element.chart = plot;
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: 260 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
      delete element.chart;
    };
  }, [points, currency]);
  return html`<div class="chart" ref=${box} role="img" aria-label="Price over time; the table below lists the same points"></div>`;
}
