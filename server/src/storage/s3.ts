// The S3-compatible storage backend (AWS S3, MinIO, SeaweedFS, Garage, Ceph RGW, …): objects under
// their key in one bucket, public URLs under QUIETWAY_S3_PUBLIC_URL (by default the endpoint and
// bucket, path-style). Streams go up as multipart uploads (@aws-sdk/lib-storage) that are aborted
// when the stream fails, so a failed or cut-off upload leaves no object and no stored parts.

import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
  paginateListObjectsV2,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { HttpError } from '../errors.js';
import type { StorageBackend } from './index.js';
import type { S3Settings } from './s3-settings.js';

/** Parts of a streamed upload (S3's smallest part but the last). */
const PART_BYTES = 5 * 1024 * 1024;

export class S3Storage implements StorageBackend {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly base: string;

  /**
   * `onError` hears why the bucket failed (the client gets 503 `Storage unavailable`).
   */
  constructor(
    private readonly s: S3Settings,
    private readonly onError?: (err: unknown) => void,
  ) {
    this.client = new S3Client({
      region: s.region,
      ...(s.endpoint ? { endpoint: s.endpoint, forcePathStyle: true } : {}),
      ...(s.accessKeyId && s.secretAccessKey
        ? { credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } }
        : {}),
      // Self-hosted servers do not all know the SDK's newer default checksums; send them only where
      // S3 requires one.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
      // A bucket that hangs fails the upload (503) rather than holding it, and the rider's upload
      // slot, forever: the SDK has no time-out of its own.
      requestHandler: {
        connectionTimeout: Math.min(5000, s.timeoutMs),
        socketTimeout: s.timeoutMs,
      },
    });
    this.base = s.publicUrl.replace(/\/+$/, '');
  }

  private check(key: string): string {
    if (!key || key.startsWith('/') || key.split('/').some((p) => p === '' || p === '.' || p === '..')) {
      throw new Error(`bad storage key ${JSON.stringify(key)}`);
    }
    return key;
  }

  url(key: string): string {
    return `${this.base}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }

  async put(key: string, data: Buffer | Readable, contentType: string): Promise<string> {
    const Key = this.check(key);
    const params = { Bucket: this.s.bucket, Key, ContentType: contentType };
    if (Buffer.isBuffer(data)) {
      try {
        await this.client.send(new PutObjectCommand({ ...params, Body: data, ContentLength: data.length }));
      } catch (err) {
        throw this.unavailable(err);
      }
      return this.url(Key);
    }
    // Whether a failure is the stream's (the client, a size cap) or the bucket's.
    let streamFailed = false;
    const failed = () => {
      streamFailed = true;
    };
    const closed = () => {
      if (!data.readableEnded) streamFailed = true;
    };
    data.once('error', failed);
    data.once('close', closed);
    // A stream shorter than one part goes up as one PutObject once it has ended (a stream that
    // fails first sends nothing); a longer one as a multipart upload. A stream that errors or is
    // destroyed fails done() only after lib-storage has aborted its multipart upload
    // (leavePartsOnError: false).
    const upload = new Upload({
      client: this.client,
      params: { ...params, Body: data },
      partSize: PART_BYTES,
      // One part at a time: an upload holds at most one part (5 MiB) in memory.
      queueSize: 1,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      await this.cleanUp(Key);
      if (streamFailed || err instanceof HttpError) throw err;
      // The bucket failed: stop reading what is left of the stream.
      data.destroy();
      throw this.unavailable(err);
    } finally {
      data.off('error', failed);
      data.off('close', closed);
    }
    return this.url(Key);
  }

  /** 503 for a bucket that cannot be reached or refuses (the cause goes to the log). */
  private unavailable(err: unknown): HttpError {
    this.onError?.(err);
    return new HttpError(
      503,
      'Storage unavailable',
      'The image store cannot be reached right now; try again later.',
      {},
      { 'Retry-After': '30' },
    );
  }

  /**
   * What a failed upload of `key` may have left when lib-storage's own abort did not get through:
   * an open multipart upload, or the object (the key is new, so it is the failed upload's).
   */
  private async cleanUp(Key: string): Promise<void> {
    const Bucket = this.s.bucket;
    try {
      const open = await this.client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: Key }));
      for (const u of open.Uploads ?? []) {
        if (u.Key === Key && u.UploadId) {
          await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: u.UploadId }));
        }
      }
      await this.client.send(new DeleteObjectCommand({ Bucket, Key }));
    } catch {
      // The sweep removes what is still there later.
    }
  }

  async delete(key: string): Promise<void> {
    const Key = this.check(key);
    try {
      // S3 answers a missing key with success too.
      await this.client.send(new DeleteObjectCommand({ Bucket: this.s.bucket, Key }));
    } catch (err) {
      throw this.unavailable(err);
    }
  }

  /** The key of one of our public URLs (for the sweep: records hold URLs), else null. */
  keyFromUrl(url: string): string | null {
    if (!url.startsWith(`${this.base}/`)) return null;
    try {
      return url
        .slice(this.base.length + 1)
        .split('/')
        .map(decodeURIComponent)
        .join('/');
    } catch {
      return null;
    }
  }

  /**
   * Deletes objects no record points to and aborts multipart uploads a killed process left open
   * (counted as `tmp`), both only when older than `olderThanMs`.
   */
  async sweep(
    isReferenced: (key: string) => boolean,
    olderThanMs: number,
  ): Promise<{ tmp: number; orphans: number }> {
    const before = Date.now() - olderThanMs;
    const removed = { tmp: 0, orphans: 0 };
    const Bucket = this.s.bucket;
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket })) {
      for (const o of page.Contents ?? []) {
        if (!o.Key || !o.LastModified || o.LastModified.getTime() > before || isReferenced(o.Key)) continue;
        await this.client.send(new DeleteObjectCommand({ Bucket, Key: o.Key }));
        removed.orphans += 1;
      }
    }
    let marker: { KeyMarker?: string; UploadIdMarker?: string } = {};
    for (;;) {
      const page = await this.client.send(new ListMultipartUploadsCommand({ Bucket, ...marker }));
      for (const u of page.Uploads ?? []) {
        if (!u.Key || !u.UploadId || !u.Initiated || u.Initiated.getTime() > before) continue;
        await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key: u.Key, UploadId: u.UploadId }));
        removed.tmp += 1;
      }
      if (!page.IsTruncated || (!page.NextKeyMarker && !page.NextUploadIdMarker)) break;
      marker = { KeyMarker: page.NextKeyMarker, UploadIdMarker: page.NextUploadIdMarker };
    }
    return removed;
  }

  close(): void {
    this.client.destroy();
  }
}
