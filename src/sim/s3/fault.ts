// An S3 error answer: the code clients branch on, and the HTTP status S3 (and RGW) give it.
export class S3Fault extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    /** Further elements of the <Error> document (BucketName, Key). */
    readonly extra: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'S3Fault';
  }
}

export const noSuchBucket = (bucket: string) =>
  new S3Fault('NoSuchBucket', 404, 'The specified bucket does not exist', { BucketName: bucket });
export const accessDenied = () => new S3Fault('AccessDenied', 403, 'Access Denied');
