// Events: the latest change events, and every new one as it happens (Server-Sent Events), filtered by the URL.
import { useEffect, useState } from 'preact/hooks';
import { query } from '../lib/api.js';
import { openStream } from '../lib/sse.js';
import { navigate } from '../lib/router.js';
import { Empty, ErrorBox, Field, html, Loading, useApi, useTitle } from '../lib/ui.js';
import { EventList } from './product.js';

const TYPES = ['product.created', 'price.changed', 'availability.changed', 'product.gone', 'article.created', 'article.updated'];
const SHOWN = 200;

export function EventsScreen({ query: params }) {
  useTitle('Events');
  const filters = { type: params.get('type') ?? '', product_id: params.get('product_id') ?? '', source: params.get('source') ?? '' };
  const filterQuery = query(filters);
  const latest = useApi(`/events${query({ ...filters, order: 'desc', limit: 50 })}`);
  const [live, setLive] = useState([]);
  const [status, setStatus] = useState('connecting');

  // From the newest event shown on, every later one arrives on the stream, once, in order.
  useEffect(() => {
    if (!latest.data) return undefined;
    setLive([]);
    const after = latest.data[0]?.id ?? 0;
    const sep = filterQuery ? '&' : '?';
    return openStream(`/events/stream${filterQuery}${sep}after=${after}`, {
      onEvent: (_type, event) => setLive((shown) => (shown.some((e) => e.id === event.id) ? shown : [event, ...shown].slice(0, SHOWN))),
      onStatus: (next, problem) => setStatus(next === 'closed' && problem?.status === 401 ? 'needs-key' : next),
    });
  }, [latest.data, filterQuery]);

  const apply = (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    navigate(`/events${query({ type: form.get('type'), product_id: form.get('product_id'), source: String(form.get('source') ?? '').trim() })}`);
  };
  const events = [...live, ...(latest.data ?? [])];

  // The filter form is uncontrolled, started from the URL (keyed by it): live events re-render the screen and must not undo what is being typed.
  return html`
    <h1>Events</h1>
    <form class="filters" onSubmit=${apply} aria-label="Filters" key=${filterQuery}>
      <${Field} label="Type" id="type">
        <select id="type" name="type">
          <option value="">Any</option>
          ${TYPES.map((t) => html`<option value=${t} selected=${t === filters.type}>${t}</option>`)}
        </select>
      <//>
      <${Field} label="Product id" id="product_id"><input id="product_id" name="product_id" type="number" min="1" defaultValue=${filters.product_id} /><//>
      <${Field} label="Source" id="source"><input id="source" name="source" type="url" defaultValue=${filters.source} /><//>
      <div class="actions"><button type="submit" class="primary">Apply</button></div>
    </form>
    <p class="muted" role="status">
      ${status === 'live' ? 'Live: new events appear here as they happen.' : status === 'reconnecting' ? 'Connection lost; reconnecting (no event is missed).' : status === 'closed' ? 'The live feed closed; reload to reconnect.' : status === 'needs-key' ? 'The live feed needs the API key: set it at the top, then reload.' : 'Connecting to the live feed…'}
    </p>
    <${ErrorBox} error=${latest.error} />
    ${latest.loading && !latest.data ? html`<${Loading} what="Loading events" />` : ''}
    ${latest.data && events.length === 0 ? html`<${Empty}><p>No events yet. They appear when a scrape sees a product for the first time or sees its price or stock change.</p><//>` : ''}
    ${events.length > 0 && html`<div aria-live="polite"><${EventList} events=${events} showProduct=${true} /></div>`}
  `;
}
