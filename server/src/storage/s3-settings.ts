// The S3 storage settings, apart from the backend (s3.ts) so that reading the configuration does not
// load the AWS SDK (about 0.4 s) when images stay in the local folder.

export interface S3Settings {
  /** e.g. `http://127.0.0.1:9000`; null: AWS S3 itself (virtual-hosted addressing). */
  endpoint: string | null;
  bucket: string;
  region: string;
  /** Both or neither; neither: the AWS SDK's default chain (AWS_* variables, instance roles). */
  accessKeyId: string | null;
  secretAccessKey: string | null;
  /** Base of the public URLs handed out; an object's URL is this plus `/` and its key. */
  publicUrl: string;
  /** A request to the bucket that stays silent this long (ms) fails (connecting: at most 5 s). */
  timeoutMs: number;
}

/** The default public URL base: path-style under a custom endpoint, virtual-hosted on AWS. */
export function defaultS3PublicUrl(endpoint: string | null, bucket: string, region: string): string {
  return endpoint
    ? `${endpoint.replace(/\/+$/, '')}/${encodeURIComponent(bucket)}`
    : `https://${bucket}.s3.${region}.amazonaws.com`;
}
