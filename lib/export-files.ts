import { CfnOutput, Duration, type RemovalPolicy, type Stack, Validations } from "aws-cdk-lib";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from "aws-cdk-lib/aws-s3";
import { EXPORTS_BUCKET_VARIABLE } from "../shared/exports/names.ts";
import type { ApiFunction } from "./api-function.ts";
import { nagRendering } from "./nag.ts";
import type { ExportFilesAccess } from "./topology.ts";

/**
 * The stage's export files (`shared/exports/storage/s3.ts`): one private bucket, encrypted, reached
 * only over TLS, its objects expiring after `EXPORT_RETENTION_DAYS` (a merchant downloads an export
 * or has it delivered by SFTP the day it is made) and unfinished multipart uploads aborted after a
 * day. Only the functions that declare `exportFiles` may use it (`grantExportFiles`).
 */
export const EXPORT_RETENTION_DAYS = 30;

export function buildExportFiles(stack: Stack, removalPolicy: RemovalPolicy): Bucket {
  const bucket = new Bucket(stack, "ExportFiles", {
    encryption: BucketEncryption.S3_MANAGED,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    enforceSSL: true,
    lifecycleRules: [
      {
        id: "ExpireExports",
        expiration: Duration.days(EXPORT_RETENTION_DAYS),
        abortIncompleteMultipartUploadAfter: Duration.days(1),
      },
    ],
    removalPolicy,
  });
  Validations.of(bucket).acknowledge({
    id: "AwsSolutions-S1",
    reason:
      "Export files are written and read only by the stage's own export functions, whose every run is logged (export id, rows, size) in their log groups; the bucket is private, TLS-only and its objects expire after 30 days.",
  });
  // A sandbox stage's bucket is removed with its stack once empty (CloudFormation deletes no objects).
  new CfnOutput(stack, "ExportFilesBucket", {
    value: bucket.bucketName,
    description: "Where export files are",
  });
  return bucket;
}

/**
 * Lets `fn` write export files (multipart uploads included) and read them back (to deliver them by
 * SFTP), and tells it the bucket in `EXPORTS_BUCKET`. No listing, no deleting: files expire.
 */
export function grantExportFiles(fn: ApiFunction, bucket: Bucket, _access: ExportFilesAccess): void {
  const objects = bucket.arnForObjects("*");
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ["s3:PutObject", "s3:GetObject", "s3:AbortMultipartUpload"],
      resources: [objects],
    }),
  );
  fn.addEnvironment(EXPORTS_BUCKET_VARIABLE, bucket.bucketName);
  if (!fn.role) throw new Error(`${fn.node.path} has no role to grant the export files to`);
  Validations.of(fn.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagRendering(fn, objects)}]`,
    reason:
      "Export files are named by environment and export (<environment>/<file>), made as exports run: IAM can only name them as <bucket ARN>/*, and only this function's role may use them.",
  });
}
