// Secrets at rest: the private signing keys are stored in the database sealed with AES-256-GCM under
// a key that lives outside it (QUIETWAY_SECRET_KEY, or the file QUIETWAY_SECRET_KEY_FILE, made at
// first start), so a copy of the database alone mints no tokens. Previous keys
// (QUIETWAY_PREVIOUS_SECRET_KEYS) only open; everything sealed under them is sealed again under the
// current key at start, which is how the key is rotated.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';

const PREFIX = 'enc:v1:';

export class SealingError extends Error {}

/** 32 bytes written as 64 hex digits or as base64 / base64url. */
function parseKey(text: string, where: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64url');
  if (key.length !== 32) {
    throw new SealingError(
      `${where} must be 32 random bytes as 64 hex digits or base64 (e.g. \`openssl rand -base64 32\`)`,
    );
  }
  return key;
}

const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);

export class SecretBox {
  private readonly byId: Map<string, Buffer>;
  private readonly currentId: string;

  constructor(
    private readonly current: Buffer,
    previous: Buffer[] = [],
  ) {
    this.currentId = keyId(current);
    this.byId = new Map([...previous, current].map((k) => [keyId(k), k]));
  }

  /** The configured key: the variable, else the file (made, readable by its owner only, if missing). */
  static load(cfg: Config['secretKey']): SecretBox {
    let current: Buffer;
    if (cfg.value) {
      current = parseKey(cfg.value, 'QUIETWAY_SECRET_KEY');
    } else {
      if (!fs.existsSync(cfg.file)) {
        fs.mkdirSync(path.dirname(cfg.file), { recursive: true });
        try {
          fs.writeFileSync(cfg.file, `${randomBytes(32).toString('base64url')}\n`, {
            mode: 0o600,
            flag: 'wx',
          });
        } catch (err) {
          // Another process made it first: use theirs.
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
      }
      current = parseKey(fs.readFileSync(cfg.file, 'utf8'), `the secret key file ${cfg.file}`);
    }
    const previous = cfg.previous.map((p, i) => parseKey(p, `QUIETWAY_PREVIOUS_SECRET_KEYS entry ${i + 1}`));
    return new SecretBox(current, previous);
  }

  static isSealed(text: string): boolean {
    return text.startsWith(PREFIX);
  }

  /** Sealed under the current key (nothing to do at rotation). */
  isCurrent(text: string): boolean {
    return text.startsWith(`${PREFIX}${this.currentId}:`);
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), data].map((b) => b.toString('base64url'));
    return `${PREFIX}${this.currentId}:${parts.join(':')}`;
  }

  open(sealed: string): string {
    const [id = '', iv = '', tag = '', data = ''] = sealed.slice(PREFIX.length).split(':');
    const key = this.byId.get(id);
    if (!key) {
      throw new SealingError(
        `a signing key is sealed with secret key ${id}, which is neither QUIETWAY_SECRET_KEY (or its file) nor one of QUIETWAY_PREVIOUS_SECRET_KEYS`,
      );
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new SealingError(`a signing key sealed with secret key ${id} does not open: it was altered`);
    }
  }
}
