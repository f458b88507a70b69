// `quietway keys …` and `quietway users …`: credential administration on the server's database,
// for self-hosters at a shell (the admin API does the same over HTTP).
import { parseArgs } from 'node:util';
import { issueKey } from '../auth/keys.js';
import type { Config } from '../config.js';
import { openStore } from '../db/database.js';
import { createRepositories, KEY_KINDS, type KeyKind, type Repositories } from '../db/repositories.js';

const KEYS_USAGE = `Usage:
  quietway keys create --kind <${KEY_KINDS.join('|')}> --name <name> [--source <slug>] [--legacy-v1]
  quietway keys list
  quietway keys revoke <id>

The key is printed once, at creation; only its digest is stored.`;

const USERS_USAGE = `Usage:
  quietway users list
  quietway users promote <email>    make a rider an admin
  quietway users demote <email>     make an admin a rider again
  quietway users promote --issuer <url> --subject <sub>
  quietway users demote --issuer <url> --subject <sub>
                                    the same for a rider of the outside identity provider, named by
                                    the (iss, sub) of their tokens (promote makes the account if needed)`;

export function withRepos<T>(config: Config, fn: (repos: Repositories) => T): T {
  const repos = createRepositories(openStore(config));
  try {
    return fn(repos);
  } finally {
    repos.close();
  }
}

export function keysCommand(config: Config, argv: string[]): number {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'create': {
      const { values } = parseArgs({
        args: rest,
        options: {
          kind: { type: 'string' },
          name: { type: 'string' },
          source: { type: 'string' },
          'legacy-v1': { type: 'boolean', default: false },
        },
      });
      const kind = values.kind as KeyKind | undefined;
      if (!kind || !KEY_KINDS.includes(kind)) {
        console.error(`quietway keys create: --kind must be one of ${KEY_KINDS.join(', ')}\n\n${KEYS_USAGE}`);
        return 2;
      }
      if (!values.name) {
        console.error(`quietway keys create: --name is required\n\n${KEYS_USAGE}`);
        return 2;
      }
      return withRepos(config, (repos) => {
        try {
          const { key, record } = issueKey(repos, {
            kind,
            name: values.name as string,
            source: values.source ?? null,
            legacyV1: values['legacy-v1'] ?? false,
          });
          console.log(
            `Created ${record.kind} key #${record.id} "${record.name}"${record.source ? ` (source ${record.source})` : ''}${record.legacyV1 ? ' with legacy v1 access' : ''}.`,
          );
          console.log('Store it now; it will not be shown again:');
          console.log(key);
          return 0;
        } catch (err) {
          console.error(`quietway keys create: ${(err as Error).message}`);
          return 2;
        }
      });
    }
    case 'list':
      return withRepos(config, (repos) => {
        const keys = repos.apiKeys.list();
        if (keys.length === 0) {
          console.log('No API keys yet. Create one with `quietway keys create --kind app --name <name>`.');
          return 0;
        }
        console.log('id  kind         prefix        name                          source      v1   status');
        for (const k of keys) {
          const status = k.revokedAt
            ? `revoked ${k.revokedAt}`
            : k.lastUsedAt
              ? `used ${k.lastUsedAt}`
              : 'unused';
          console.log(
            `${String(k.id).padEnd(3)} ${k.kind.padEnd(12)} ${k.prefix.padEnd(13)} ${k.name.slice(0, 29).padEnd(29)} ${(k.source ?? '-').padEnd(11)} ${(k.legacyV1 ? 'yes' : 'no').padEnd(4)} ${status}`,
          );
        }
        return 0;
      });
    case 'revoke': {
      const id = Number(rest[0]);
      if (!Number.isInteger(id) || id <= 0) {
        console.error(
          `quietway keys revoke: give the key's id (see \`quietway keys list\`)\n\n${KEYS_USAGE}`,
        );
        return 2;
      }
      return withRepos(config, (repos) => {
        const key = repos.apiKeys.byId(id);
        if (!key) {
          console.error(`quietway keys revoke: no key #${id}`);
          return 1;
        }
        if (!repos.apiKeys.revoke(id)) {
          console.log(`Key #${id} was already revoked.`);
          return 0;
        }
        console.log(`Revoked key #${id} "${key.name}"; it is refused from the next request on.`);
        return 0;
      });
    }
    default:
      console.error(sub ? `quietway keys: unknown subcommand '${sub}'\n\n${KEYS_USAGE}` : KEYS_USAGE);
      return sub ? 2 : 0;
  }
}

/** `users promote|demote --issuer --subject`: admin rights of an outside identity, granted to its pair. */
function externalRole(config: Config, sub: 'promote' | 'demote', args: string[]): number {
  let values: { issuer?: string; subject?: string };
  try {
    ({ values } = parseArgs({ args, options: { issuer: { type: 'string' }, subject: { type: 'string' } } }));
  } catch (err) {
    console.error(`quietway users ${sub}: ${(err as Error).message}\n\n${USERS_USAGE}`);
    return 2;
  }
  const { issuer, subject } = values;
  if (!issuer || !subject) {
    console.error(`quietway users ${sub}: give both --issuer and --subject\n\n${USERS_USAGE}`);
    return 2;
  }
  return withRepos(config, (repos) => {
    const role = sub === 'promote' ? 'admin' : 'user';
    if (sub === 'promote' && !repos.users.byExternalIdentity(issuer, subject)) {
      repos.users.createExternal({ issuer, subject, email: null });
    }
    const user = repos.users.setExternalRole(issuer, subject, role);
    if (!user) {
      console.error(`quietway users ${sub}: no rider of ${issuer} with subject ${subject}`);
      return 1;
    }
    console.log(
      `${issuer} ${subject} (${user.email}) is now ${role === 'admin' ? 'an admin' : 'a rider'} (from their next request).`,
    );
    return 0;
  });
}

export function usersCommand(config: Config, argv: string[]): number {
  const [sub, email] = argv;
  if ((sub === 'promote' || sub === 'demote') && email?.startsWith('--')) {
    return externalRole(config, sub, argv.slice(1));
  }
  switch (sub) {
    case 'list':
      return withRepos(config, (repos) => {
        const users = repos.users.list();
        if (users.length === 0) {
          console.log('No riders yet. They sign up with POST /auth/v1/signup.');
          return 0;
        }
        for (const u of users) {
          const ext = repos.users.externalIdentity(u.id);
          const via = ext ? `  (${ext.issuer} ${ext.subject})` : '';
          console.log(`${String(u.id).padEnd(5)} ${u.role.padEnd(6)} ${u.email}  ${u.name}${via}`);
        }
        return 0;
      });
    case 'promote':
    case 'demote': {
      if (!email) {
        console.error(`quietway users ${sub}: give the rider's email\n\n${USERS_USAGE}`);
        return 2;
      }
      return withRepos(config, (repos) => {
        const found = repos.users.byEmail(email);
        const external = found && repos.users.externalIdentity(found.id);
        if (external) {
          // The provider's email is the provider's word; rights go to the (issuer, subject) pair.
          console.error(
            `quietway users ${sub}: ${email} signs in through ${external.issuer}; use \`quietway users ${sub} --issuer ${external.issuer} --subject ${external.subject}\``,
          );
          return 1;
        }
        const user = repos.users.setRole(email, sub === 'promote' ? 'admin' : 'user');
        if (!user) {
          console.error(`quietway users ${sub}: no rider with email ${email}`);
          return 1;
        }
        console.log(
          `${user.email} is now ${user.role === 'admin' ? 'an admin' : 'a rider'} (from their next sign-in or token refresh).`,
        );
        return 0;
      });
    }
    default:
      console.error(sub ? `quietway users: unknown subcommand '${sub}'\n\n${USERS_USAGE}` : USERS_USAGE);
      return sub ? 2 : 0;
  }
}
