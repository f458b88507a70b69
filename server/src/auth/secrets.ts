// Secrets the server hands out: API keys and refresh tokens. Both are 256-bit random strings, shown
// once and stored only as SHA-256 digests (a fast hash suffices for secrets of full entropy; slow
// hashes are for passwords).
import { createHash, randomBytes } from 'node:crypto';
import type { KeyKind } from '../db/repositories.js';

const KEY_PREFIX: Record<KeyKind, string> = {
  app: 'qw_app_',
  partner: 'qw_prt_',
  publishable: 'qw_pub_',
  service: 'qw_svc_',
};

/** API keys are recognisable by this prefix (and JWTs by their three dot-separated parts). */
export const API_KEY_PREFIX = 'qw_';

export function sha256(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function newApiKey(kind: KeyKind): { key: string; prefix: string; hash: string } {
  const key = KEY_PREFIX[kind] + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, 12), hash: sha256(key) };
}

export function newRefreshToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: sha256(token) };
}
