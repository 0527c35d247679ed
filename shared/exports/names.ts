/**
 * Names the deployment shares with the exports code (`lib/topology.ts` imports them): kept apart so
 * that the topology does not load what runs exports.
 */

/** The item type of an export: the table's stream filter matches it to queue a requested export's run. */
export const EXPORT_ITEM_TYPE = "export";

/** The variable that tells the stream consumer the URL of the export queue. */
export const EXPORT_QUEUE_URL_VARIABLE = "EXPORT_QUEUE_URL";

/** The variables that choose the export storage: the stage's bucket in AWS, a folder locally. */
export const EXPORTS_BUCKET_VARIABLE = "EXPORTS_BUCKET";
export const EXPORTS_DIR_VARIABLE = "EXPORTS_DIR";

/** The item type of a request to deliver a completed export by SFTP: the stream queues its delivery. */
export const EXPORT_DELIVERY_ITEM_TYPE = "export-delivery";

/** The variable that tells the stream consumer the URL of the delivery queue. */
export const EXPORT_DELIVERY_QUEUE_URL_VARIABLE = "EXPORT_DELIVERY_QUEUE_URL";
