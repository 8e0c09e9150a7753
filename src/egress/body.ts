// Reading a fetched body: the size cap on decompressed bytes, the "is this HTML at all" sniff, and the page's charset.
import type { Readable } from 'node:stream';
import { ResultType, Sniffer } from 'encoding-sniffer/sniffer';
import type { Dispatcher } from 'undici';
import { PageTooLarge, UpstreamFailed } from '../problems.js';

const SNIFF_BYTES = 512;
/**
 * How far the `<meta charset>` prescan reads. The standard says 1024 bytes; shops put long scripts in
 * `<head>` before it, and a browser that misses it there still finds it while parsing, so we read further.
 */
const PRESCAN_BYTES = 4096;

/**
 * Collects the body, failing as soon as it passes `limit` bytes — or, with `truncate`, keeping the
 * first `limit` bytes. The agent's decompression interceptor hands us decoded bytes as we pull them,
 * so the cap counts what a page decompresses to and a gzip bomb stops there. With `sniff`, a body that
 * does not start like markup is rejected after its first bytes instead of being downloaded whole.
 * `setting` names the setting the limit comes from, for the error to name (see pageTooLarge).
 */
export async function readBody(
  response: Dispatcher.ResponseData,
  limit: number,
  label: string,
  options: { truncate?: boolean; sniff?: boolean; setting?: string } = {},
): Promise<Buffer> {
  const body = response.body as Readable;
  const encoding = firstHeader(response.headers['content-encoding'])?.trim().toLowerCase();
  // The interceptor removes the header of what it decoded; one still here is one it does not know.
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    discard(body);
    throw new UpstreamFailed(`The upstream used an unsupported content encoding "${encoding}".`, { permanent: true });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let sniffPending = options.sniff === true;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (sniffPending && size >= SNIFF_BYTES) {
        sniffPending = false;
        assertLooksLikeHtml(Buffer.concat(chunks, size), label);
      }
      if (size > limit) {
        if (options.truncate) return Buffer.concat(chunks, size).subarray(0, limit);
        throw options.setting === undefined ? new UpstreamFailed(`${label} is larger than ${limit} bytes.`, { permanent: true }) : pageTooLarge(label, limit, options.setting);
      }
    }
  } finally {
    // Leaving early (cap, sniff, error) must close the connection rather than drain 20 MB into nowhere.
    if (!body.readableEnded) discard(body);
  }
  const whole = Buffer.concat(chunks, size);
  if (sniffPending) assertLooksLikeHtml(whole, label);
  return whole;
}

/**
 * The service's own cap refused a page, and the answer says so: which setting, its value, that the
 * size counts decompressed bytes, and that the site did answer (a 502 alone reads as the site's fault).
 */
export function pageTooLarge(label: string, limit: number, setting: string): PageTooLarge {
  const mib = Math.round((limit / 1_048_576) * 10) / 10;
  return new PageTooLarge(
    `${label} is larger than ${limit} bytes (${mib} MiB, decompressed), the cap this service sets on a page (${setting}): ` +
      `the site answered, this service stopped reading. Raise ${setting} to read pages this large.`,
  );
}

/** Without a Content-Type we accept the body only if its first non-blank character is `<`. */
function assertLooksLikeHtml(bytes: Buffer, label: string): void {
  const head = bytes.subarray(0, SNIFF_BYTES);
  const sniffed = sniff(head, undefined);
  const text = new TextDecoder(sniffed.resultType === ResultType.BOM ? sniffed.encoding : 'latin1').decode(head);
  if (!text.trimStart().startsWith('<')) {
    throw new UpstreamFailed(`${label} has no Content-Type and does not look like HTML; not HTML.`, { permanent: true });
  }
}

const CHARSET_SOURCES: Record<ResultType, string> = {
  [ResultType.BOM]: 'byte order mark',
  [ResultType.PASSED]: 'Content-Type header',
  [ResultType.XML_PREFIX]: 'XML declaration',
  [ResultType.META_TAG]: '<meta> tag',
  [ResultType.XML_ENCODING]: 'XML declaration',
  [ResultType.DEFAULT]: 'default',
};

/**
 * The page's encoding as the HTML standard sniffs it (BOM, then the Content-Type charset, then a
 * prescan of the first PRESCAN_BYTES for `<meta>`), defaulting to UTF-8; `from` says which decided.
 */
export function pageCharset(bytes: Buffer, contentType: string | undefined): { label: string; from: string } {
  const sniffed = sniff(bytes, contentType?.match(/;\s*charset\s*=\s*["']?([^"';\s]+)/i)?.[1]);
  return { label: sniffed.encoding.toLowerCase(), from: CHARSET_SOURCES[sniffed.resultType] };
}

function sniff(bytes: Uint8Array, transportLayerEncodingLabel: string | undefined): Sniffer {
  const sniffer = new Sniffer({ maxBytes: PRESCAN_BYTES, defaultEncoding: 'utf-8', ...(transportLayerEncodingLabel === undefined ? {} : { transportLayerEncodingLabel }) });
  sniffer.write(bytes.subarray(0, PRESCAN_BYTES));
  return sniffer;
}

export function decodeHtml(bytes: Buffer, label: string): string {
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    // An encoding this runtime cannot decode is the page's oddity; UTF-8 is the most likely truth.
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** Closes a body we will not read; undici reports that as an "aborted" error nobody needs to hear. */
export function discard(stream: Readable): void {
  stream.on('error', () => undefined);
  stream.destroy();
}

export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
