// A channel config checked against its schema outside a route (one read from an Apprise URL), and its targets against the address guard.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { assertAllowedUrl } from '../../egress/address-guard.js';
import { ValidationFailed, type FieldError } from '../../problems.js';
import { ChannelConfig } from './channel-schema.js';

// ajv-formats ships CommonJS with a default export that TypeScript sees one level down.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
const validConfig = ajv.compile(ChannelConfig as unknown as object);

/** A config read from an Apprise URL, held to the same schema as one sent as `config`: 422 naming `path` otherwise. */
export function assertValidConfig(config: unknown, path: string): asserts config is ChannelConfig {
  if (validConfig(config)) return;
  const errors: FieldError[] = (validConfig.errors ?? [])
    .filter((e: ErrorObject) => e.keyword !== 'anyOf' && e.keyword !== 'const')
    // The URL holds secrets: the fields it yielded are named, never quoted.
    .map((e: ErrorObject) => ({ path: `${path}${e.instancePath}`, message: e.message ?? 'is invalid' }));
  throw new ValidationFailed(errors.length > 0 ? errors.slice(0, 5) : [{ path, message: 'does not describe a channel' }]);
}

/**
 * Where a channel's messages go, refused now when the address guard would refuse them at sending
 * (an IP literal or localhost name on a private network, a non-http scheme): the same rule as scrape
 * and webhook URLs (SCRAPE_ALLOW_PRIVATE_NETWORKS). Names the host only, never the secret URL.
 */
export function assertChannelTargets(config: ChannelConfig, allowPrivate: boolean, path: string): void {
  const targets: Array<[string, string]> = [];
  switch (config.kind) {
    case 'email':
      targets.push(['host', `http://${config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host}/`]);
      break;
    case 'ntfy':
    case 'gotify':
      targets.push(['server_url', config.server_url]);
      break;
    case 'slack':
    case 'discord':
      targets.push(['webhook_url', config.webhook_url]);
      break;
    case 'teams':
      targets.push(['workflow_url', config.workflow_url]);
      break;
    case 'telegram':
      if (config.api_url !== undefined) targets.push(['api_url', config.api_url]);
      break;
    case 'webhook':
      break;
  }
  for (const [field, url] of targets) {
    try {
      assertAllowedUrl(url, allowPrivate);
    } catch (error) {
      const host = safeHost(url);
      throw new ValidationFailed(
        [{ path: `${path}/${field}`, message: `is refused by the address guard${host === null ? '' : ` (${host})`}: ${(error as Error).message.replace(/https?:\/\/\S+/g, '…')}` }],
        `The channel's ${field} points where the service may not send: ${(error as Error).message.replace(/https?:\/\/\S+/g, '…')} (SCRAPE_ALLOW_PRIVATE_NETWORKS governs private addresses).`,
      );
    }
  }
}

function safeHost(url: string): string | null {
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}
