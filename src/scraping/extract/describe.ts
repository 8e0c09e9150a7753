// What explain shows of extraction's candidates: each source's, with the values it found.
import { TRUST } from './merge.js';
import type { Candidate, ItemFields, PageExplanation, Source } from './types.js';

export function describeCandidates(found: ReadonlyMap<Source, Candidate[]>): PageExplanation['candidates'] {
  const out: PageExplanation['candidates'] = {};
  for (const source of TRUST) {
    const candidates = found.get(source);
    if (candidates === undefined || candidates.length === 0) continue;
    out[source] = candidates.map((c) => {
      const fields: Partial<ItemFields> = {};
      for (const [name, located] of Object.entries(c.fields)) (fields as Record<string, unknown>)[name] = located?.value;
      return { locator: c.locator, scope: c.scope, ...(c.main ? { main: true } : {}), fields };
    });
  }
  return out;
}
