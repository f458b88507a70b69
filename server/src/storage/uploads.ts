// Receiving image uploads: multipart parts are streamed one at a time straight into storage (never
// buffered whole), the first unexpected part, non-image or oversize file stops the reading at once,
// the request's bytes are capped (QUIETWAY_MAX_UPLOAD_BYTES) and so are the uploads one rider has
// in progress (QUIETWAY_MAX_UPLOADS_PER_USER). What a failed request stored is removed again.
import { pipeline, Transform } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../errors.js';
import { readHead, type StorageBackend, sniffImage } from './index.js';

export interface UploadLimits {
  /** Largest file. */
  maxFileBytes: number;
  /** All parts of one request together. */
  maxRequestBytes: number;
  /** Uploads one rider may have in progress. */
  maxPerUser: number;
}

export interface StoredImage {
  key: string;
  url: string;
  contentType: string;
}

const inProgress = new Map<string, number>();

/**
 * Streams the image files of a multipart request into storage. `fields` names the accepted file
 * fields, `label` starts error messages (`photo: …`), `keyFor` makes a storage key from the
 * sniffed extension. Throws 400 (not multipart, unexpected part, not an image, no file),
 * 413 (too large, too many files) or 429 (too many uploads of this rider in progress).
 */
export async function receiveImages(
  req: FastifyRequest,
  storage: StorageBackend,
  who: string,
  limits: UploadLimits,
  opts: { fields: string[]; maxFiles: number; label: string; keyFor: (extension: string) => string },
): Promise<StoredImage[]> {
  const { label } = opts;
  if (!req.isMultipart()) {
    throw new HttpError(400, `${label}: send multipart/form-data with the image under "${opts.fields[0]}"`);
  }
  // Without a boundary the parser throws before reading a byte (was a 500; found by schemathesis).
  if (!/;\s*boundary=/i.test(String(req.headers['content-type']))) {
    throw new HttpError(400, `${label}: the multipart/form-data Content-Type has no boundary`);
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxRequestBytes) {
    throw new HttpError(413, 'Request body too large', `at most ${limits.maxRequestBytes} bytes per upload`);
  }
  const running = inProgress.get(who) ?? 0;
  if (running >= limits.maxPerUser) {
    throw new HttpError(
      429,
      'Too many uploads in progress',
      `at most ${limits.maxPerUser} at once`,
      {},
      {
        'Retry-After': '5',
      },
    );
  }
  inProgress.set(who, running + 1);
  const stored: StoredImage[] = [];
  let total = 0;
  try {
    const parts = req.parts({
      // One field part is let through, to be refused by name below rather than by a bare count.
      limits: {
        fileSize: limits.maxFileBytes,
        files: opts.maxFiles,
        fields: 1,
        fieldSize: 1024,
        parts: opts.maxFiles + 1,
      },
    });
    for await (const part of parts) {
      if (part.type !== 'file' || !opts.fields.includes(part.fieldname)) {
        throw new HttpError(
          400,
          `${label}: unexpected part "${part.fieldname}"; send files under "${opts.fields[0]}" only`,
        );
      }
      const head = await readHead(part.file, 16);
      const kind = sniffImage(head);
      if (!kind) throw new HttpError(400, `${label}: ${part.filename} is not a JPEG, PNG, GIF or WebP image`);
      let tooMuch = false;
      const counted = new Transform({
        transform(chunk: Buffer, _enc, done) {
          total += chunk.length;
          if (total > limits.maxRequestBytes) {
            tooMuch = true;
            done(
              new HttpError(
                413,
                'Request body too large',
                `at most ${limits.maxRequestBytes} bytes per upload`,
              ),
            );
          } else done(null, chunk);
        },
      });
      // pipeline() also ends `counted` with an error when the upload is cut off (the client went away).
      pipeline(part.file, counted, () => {});
      const key = opts.keyFor(kind.extension);
      let url: string;
      try {
        url = await storage.put(key, counted, kind.contentType);
      } catch (err) {
        if (tooMuch) {
          throw new HttpError(
            413,
            'Request body too large',
            `at most ${limits.maxRequestBytes} bytes per upload`,
          );
        }
        throw err;
      }
      stored.push({ key, url, contentType: kind.contentType });
      if (part.file.truncated) {
        throw new HttpError(
          413,
          'Request file too large',
          `${label}: at most ${limits.maxFileBytes} bytes per file`,
        );
      }
    }
    if (stored.length === 0) throw new HttpError(400, `${label}: no file received`);
    return stored;
  } catch (err) {
    await Promise.allSettled(stored.map((s) => storage.delete(s.key)));
    throw err;
  } finally {
    const left = (inProgress.get(who) ?? 1) - 1;
    if (left <= 0) inProgress.delete(who);
    else inProgress.set(who, left);
  }
}
