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

/** The chart; the uPlot instance is kept on the element as `chart` (its data is what is plotted). */
export function PriceChart({ points, currency }) {
  const box = useRef(null);
  useEffect(() => {
    const element = box.current;
    if (!element || points.length === 0) return undefined;
    const stepped = uPlot.paths.stepped({ align: 1 });
    const width = () => Math.max(280, element.clientWidth);
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
      },
      chartData(points),
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
