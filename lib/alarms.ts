import { Duration, type Stack } from "aws-cdk-lib";
import { Alarm, ComparisonOperator, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import type { Queue } from "aws-cdk-lib/aws-sqs";

/** An alarm that fires as soon as one message sits in `deadLetters`: something gave up for good. */
export function alarmOnDeadLetters(stack: Stack, id: string, deadLetters: Queue, description: string): Alarm {
  return new Alarm(stack, id, {
    alarmDescription: description,
    metric: deadLetters.metricApproximateNumberOfMessagesVisible({
      statistic: "Maximum",
      period: Duration.minutes(1),
    }),
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}
