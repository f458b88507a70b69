// `quietway oauth-clients …`: registration of third-party apps on the server's database, for
// self-hosters at a shell (the admin API does the same over HTTP).
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import type { OAuthClientRecord } from '../db/oauth.js';
import {
  CLIENT_TYPES,
  ClientRegistrationError,
  registerClient,
  rotateClientSecret,
  updateClient,
} from '../oauth/clients.js';
import { withRepos } from './admin.js';

const USAGE = `Usage:
  quietway oauth-clients create --name <name> --type <public|confidential> --redirect-uri <uri> [--redirect-uri <uri> ...]
  quietway oauth-clients list
  quietway oauth-clients update <client_id> [--name <name>] [--redirect-uri <uri> ...]
  quietway oauth-clients rotate-secret <client_id>
  quietway oauth-clients revoke <client_id>

Redirect URIs are matched exactly: https://…, http://localhost:<port>/<path> for development, or a
custom scheme with a full path for mobile apps. A confidential app's secret is printed once; a new
secret or a revocation stops the app's refresh tokens at once.`;

const describe = (c: OAuthClientRecord) =>
  `${c.clientId}  ${c.type.padEnd(12)} ${c.name}${c.revokedAt ? `  (revoked ${c.revokedAt})` : ''}\n    ${c.redirectUris.join('\n    ')}`;

function fail(sub: string, message: string): number {
  console.error(`quietway oauth-clients ${sub}: ${message}\n\n${USAGE}`);
  return 2;
}

export function oauthClientsCommand(config: Config, argv: string[]): number {
  const [sub, ...rest] = argv;
  const options = {
    name: { type: 'string' },
    type: { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
  } as const;
  try {
    switch (sub) {
      case 'create': {
        const { values } = parseArgs({ args: rest, options });
        const type = values.type as (typeof CLIENT_TYPES)[number] | undefined;
        if (!type || !CLIENT_TYPES.includes(type)) return fail(sub, '--type must be public or confidential');
        if (!values.name) return fail(sub, '--name is required');
        return withRepos(config, (repos) => {
          const { client, secret } = registerClient(repos.oauth, {
            name: values.name as string,
            type,
            redirectUris: values['redirect-uri'] ?? [],
          });
          console.log(`Registered ${client.type} app "${client.name}".`);
          console.log(`client_id: ${client.clientId}`);
          if (secret) {
            console.log('client_secret (store it now; it will not be shown again):');
            console.log(secret);
          }
          return 0;
        });
      }
      case 'list':
        return withRepos(config, (repos) => {
          const clients = repos.oauth.listClients();
          if (clients.length === 0) {
            console.log('No apps yet. Register one with `quietway oauth-clients create`.');
            return 0;
          }
          for (const c of clients) console.log(describe(c));
          return 0;
        });
      case 'update': {
        const { values, positionals } = parseArgs({ args: rest, options, allowPositionals: true });
        const clientId = positionals[0];
        if (!clientId) return fail(sub, "give the app's client_id");
        if (!values.name && !values['redirect-uri']) return fail(sub, 'give --name or --redirect-uri');
        return withRepos(config, (repos) => {
          const c = updateClient(repos.oauth, clientId, {
            name: values.name,
            redirectUris: values['redirect-uri'],
          });
          if (!c) {
            console.error(`quietway oauth-clients update: no app ${clientId}`);
            return 1;
          }
          console.log(`Updated; applies to the next authorize request:\n${describe(c)}`);
          return 0;
        });
      }
      case 'rotate-secret':
      case 'revoke': {
        const clientId = rest[0];
        if (!clientId) return fail(sub, "give the app's client_id (see `quietway oauth-clients list`)");
        return withRepos(config, (repos) => {
          if (!repos.oauth.client(clientId)) {
            console.error(`quietway oauth-clients ${sub}: no app ${clientId}`);
            return 1;
          }
          if (sub === 'revoke') {
            if (!repos.oauth.revokeClient(clientId)) {
              console.log(`App ${clientId} was already revoked.`);
              return 0;
            }
            console.log(
              `Revoked app ${clientId}; its refresh tokens stop now, access tokens within the hour.`,
            );
            return 0;
          }
          const r = rotateClientSecret(repos.oauth, clientId);
          console.log(`New client_secret for ${clientId} (store it now; it will not be shown again):`);
          console.log(r?.secret);
          console.log('The old secret and every refresh token of the app stop working now.');
          return 0;
        });
      }
      default:
        if (sub) return fail(sub, 'unknown subcommand');
        console.log(USAGE);
        return 0;
    }
  } catch (err) {
    if (
      err instanceof ClientRegistrationError ||
      (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      console.error(`quietway oauth-clients ${sub}: ${(err as Error).message}`);
      return 2;
    }
    throw err;
  }
}
