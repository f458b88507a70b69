// Left-overs of killed or failed uploads (issue 26, finding 8): unfinished `.tmp` files and files no
// record points to are removed at start (and periodically), once older than an upload could be.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { testConfig } from '../helpers.js';

describe('left-over upload files', () => {
  it('are removed at start: old .tmp files and unreferenced files; referenced and recent ones stay', async () => {
    const config = testConfig();
    const first = await buildApp({ config });
    const signup = await first.inject({
      method: 'POST',
      url: '/auth/v1/signup',
      payload: { email: 'kept@example.org', password: 'correct horse battery', name: 'Kept' },
    });
    const token = signup.json().access_token as string;
    const kept = `avatars/${signup.json().user.identity_user_id}/kept.png`;
    const patch = await first.inject({
      method: 'PATCH',
      url: '/user/',
      headers: { authorization: `Bearer ${token}` },
      payload: { image_url: `${config.publicUrl}/storage/v1/object/public/${kept}` },
    });
    expect(patch.statusCode).toBe(200);
    await first.close();

    const root = path.join(config.dataDir, 'storage');
    const hourAgo = new Date(Date.now() - 3_600_000);
    const files = {
      kept,
      tmp: 'events/3/7a1c.png.0f6e1c52-7f0b-4f55-9a53-3f0a1f8e9c11.tmp',
      orphan: 'events/3/orphan.png',
      recentOrphan: 'events/3/just-uploaded.png',
      recentTmp: 'avatars/x/y.png.2b0c.tmp',
    };
    for (const [name, key] of Object.entries(files)) {
      const full = path.join(root, key);
      fs.mkdirSync(path.dirname(full), { recursive: true });
      fs.writeFileSync(full, 'x');
      if (!name.startsWith('recent')) fs.utimesSync(full, hourAgo, hourAgo);
    }
    const app = await buildApp({ config });
    await app.ready();
    const exists = (key: string) => fs.existsSync(path.join(root, key));
    expect(exists(files.kept)).toBe(true);
    expect(exists(files.tmp)).toBe(false);
    expect(exists(files.orphan)).toBe(false);
    expect(exists(files.recentOrphan)).toBe(true);
    expect(exists(files.recentTmp)).toBe(true);
    await app.close();
  });
});
