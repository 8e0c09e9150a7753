// Entry point of the auxiliary service: build the app with a client for the main service, listen, shut down on signals.
import { loadConfig, loadDotEnv } from '../config/config.js';
import { serverSettings } from '../http/base-app.js';
import { runService } from '../http/run-service.js';
import { buildAuxApp } from './app.js';
import { createMainClient } from './main-client.js';

loadDotEnv();
const config = loadConfig();

await runService({
  name: 'auxiliary',
  host: config.http.host,
  port: config.auxiliary.port,
  logLevel: config.logLevel,
  async start(log) {
    const main = createMainClient(config.auxiliary.mainServiceUrl, config.auxiliary.proxyTimeoutMs);
    log.info({ main_service: config.auxiliary.mainServiceUrl }, 'relaying to the main service');
    const app = await buildAuxApp({ config: { ...serverSettings(config), ...config.auxiliary }, main });
    return {
      app,
      close: () => main.close(),
    };
  },
});
