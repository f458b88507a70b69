// Issuing API keys (shared by the admin API and `quietway keys`).
import type { ApiKeyRecord, KeyKind, Repositories } from '../db/repositories.js';
import { newApiKey } from './secrets.js';

/** Partner source slugs: 2 to 32 characters of a-z, 0-9, _ and - (interface spec "Limits"). */
export const SOURCE_SLUG = /^[a-z0-9_-]{2,32}$/;

export function issueKey(
  repos: Repositories,
  k: { kind: KeyKind; name: string; source: string | null; legacyV1: boolean },
): { key: string; record: ApiKeyRecord } {
  if ((k.kind === 'partner') !== (k.source !== null)) {
    throw new Error('partner keys need a source slug, and only partner keys have one');
  }
  if (k.source !== null && !SOURCE_SLUG.test(k.source)) {
    throw new Error('source must be 2 to 32 characters of a-z, 0-9, _ and -');
  }
  const { key, prefix, hash } = newApiKey(k.kind);
  const record = repos.apiKeys.create({ ...k, prefix, keyHash: hash });
  return { key, record };
}
