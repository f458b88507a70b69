// The local-folder storage backend: files under `<data>/storage/<key>`, written to a temporary name
// and renamed (a crash never leaves half a file), public URLs under /storage/v1/object/public/.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { StorageBackend } from './index.js';
import { sniffImage } from './index.js';

/** Files being written end with this until they are complete (a crash may leave some; see sweep). */
export const TMP_SUFFIX = '.tmp';

export class LocalStorage implements StorageBackend {
  readonly kind = 'local' as const;
  constructor(
    private readonly root: string,
    private readonly publicUrl: string,
  ) {}

  private file(key: string): string {
    const full = path.resolve(this.root, key);
    if (!full.startsWith(path.resolve(this.root) + path.sep))
      throw new Error('storage key outside the storage folder');
    return full;
  }

  async put(key: string, data: Buffer | Readable): Promise<string> {
    const full = this.file(key);
    await fs.mkdir(path.dirname(full), { recursive: true });
    const tmp = `${full}.${randomUUID()}${TMP_SUFFIX}`;
    try {
      if (Buffer.isBuffer(data)) await fs.writeFile(tmp, data);
      else await pipeline(data, createWriteStream(tmp));
      await fs.rename(tmp, full);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
    return `${this.publicUrl.replace(/\/$/, '')}/storage/v1/object/public/${key}`;
  }

  async sweep(
    isReferenced: (key: string) => boolean,
    olderThanMs: number,
  ): Promise<{ tmp: number; orphans: number }> {
    const root = path.resolve(this.root);
    const before = Date.now() - olderThanMs;
    const removed = { tmp: 0, orphans: 0 };
    let entries: string[];
    try {
      entries = await fs.readdir(root, { recursive: true });
    } catch {
      return removed; // nothing stored yet
    }
    for (const rel of entries) {
      const full = path.join(root, rel);
      const stat = await fs.stat(full).catch(() => null);
      if (!stat?.isFile() || stat.mtimeMs > before) continue;
      const key = rel.split(path.sep).join('/');
      const tmp = key.endsWith(TMP_SUFFIX);
      if (!tmp && isReferenced(key)) continue;
      await fs.rm(full, { force: true });
      removed[tmp ? 'tmp' : 'orphans'] += 1;
    }
    return removed;
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.file(key), { force: true });
  }

  async get(key: string): Promise<{ data: Buffer; contentType: string } | null> {
    try {
      const data = await fs.readFile(this.file(key));
      return { data, contentType: sniffImage(data)?.contentType ?? 'application/octet-stream' };
    } catch {
      return null;
    }
  }
}
