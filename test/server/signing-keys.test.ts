// Processes started together on a fresh store (two servers behind a balancer, a server and the
// admin CLI) must sign with one key: a token one process issues is a credential at the others.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../server/src/auth/sealing.js';
import { TokenService } from '../../server/src/auth/tokens.js';
import { openStore } from '../../server/src/db/database.js';
import { createRepositories } from '../../server/src/db/repositories.js';
import { tempDir, testStore } from '../helpers.js';

describe('signing keys', () => {
  it('processes starting together on a fresh store agree on one key', async () => {
    for (let round = 0; round < 5; round++) {
      const dir = tempDir('quietway-keys-');
      const where = testStore(dir);
      const repos = [createRepositories(openStore(where)), createRepositories(openStore(where))] as const;
      const box = SecretBox.load({ value: null, file: path.join(dir, 'secret.key'), previous: [] });
      const issuer = 'http://127.0.0.1:8080/auth/v1';
      // Both find no key and generate one at once; only the first stored is used.
      const [a, b] = await Promise.all(repos.map((r) => TokenService.create(r, issuer, box)));
      expect(repos[0].signingKeys.active()).toHaveLength(1);
      const user = repos[0].users.create({
        email: `r${round}@example.org`,
        name: 'Rider',
        passwordHash: null,
      });
      const fromA = await (a as TokenService).issueAccessToken(user, 'session-a');
      const fromB = await (b as TokenService).issueAccessToken(user, 'session-b');
      await expect((b as TokenService).verify(fromA)).resolves.toMatchObject({ kind: 'session' });
      await expect((a as TokenService).verify(fromB)).resolves.toMatchObject({ kind: 'session' });
    }
  });
});
