#!/usr/bin/env node
// The `quietway` command: serve, build-graph, keys, users, oauth-clients.
import { keysCommand, usersCommand } from './commands/admin.js';
import { buildGraphCommand } from './commands/build-graph.js';
import { oauthClientsCommand } from './commands/oauth-clients.js';
import { ConfigError, loadConfig } from './config.js';
import { SERVER_VERSION } from './version.js';

const USAGE = `quietway ${SERVER_VERSION}

Usage:
  quietway serve                 start the API server (configuration from QUIETWAY_* variables)
  quietway build-graph ...       build a city graph from OSM extracts
  quietway keys ...              create, list and revoke API keys
  quietway users ...             manage rider accounts (promote an admin)
  quietway oauth-clients ...     register third-party apps (OAuth 2.1 sign-in)
  quietway --version | --help
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      // Loaded on demand: the admin commands need none of the server (nor oidc-provider's Node 20 warning).
      const config = loadConfig();
      // The first city graphs start loading on libuv's pool while the server's modules are imported.
      const { graphFiles, preload } = await import('./routing/preload.js');
      preload(
        graphFiles(config.graphDir, config.cities).slice(0, config.loadConcurrency),
        config.queryGraphMb ?? undefined,
      );
      const { startServer } = await import('./server.js');
      await startServer(config);
      return -1; // keep running until a signal
    }
    case 'build-graph':
      return buildGraphCommand(loadConfig(), rest);
    case 'keys':
      return keysCommand(loadConfig(), rest);
    case 'users':
      return usersCommand(loadConfig(), rest);
    case 'oauth-clients':
      return oauthClientsCommand(loadConfig(), rest);
    case '--version':
    case '-v':
      console.log(SERVER_VERSION);
      return 0;
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      console.log(USAGE);
      return 0;
    default:
      console.error(`quietway: unknown command '${command}'\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError) {
      console.error(`quietway: ${err.message}`);
    } else {
      console.error(`quietway: ${(err as Error).message ?? err}`);
    }
    process.exitCode = 1;
  },
);
