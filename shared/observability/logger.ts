import { Logger } from "@aws-lambda-powertools/logger";

/**
 * One logger for every function. Request bodies are never logged (they carry card numbers);
 * per request we append the request id and the calling project.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? "payment-api" });
