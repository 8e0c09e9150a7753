// Entry point of the auxiliary service: build the app with a client for the main service, listen, shut down on signals.
import { loadConfig, loadDotEnv } from '../config.js';
import { runService } from '../http/run-service.js';
import { buildAuxApp } from './app.js';
import { createMainClient } from './main-client.js';

loadDotEnv();
const config = loadConfig();

await runService({
  name: 'auxiliary',
  host: config.host,
  port: config.auxPort,
  logLevel: config.logLevel,
  async start(log) {
    const main = createMainClient(config.mainServiceUrl, config.proxyTimeoutMs);
    log.info({ main_service: config.mainServiceUrl }, 'relaying to the main service');
    const app = await buildAuxApp({ config, main });
    return {
      app,
      close: () => main.close(),
    };
  },
});
