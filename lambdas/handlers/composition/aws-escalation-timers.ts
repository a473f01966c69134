import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { EventBridgeSchedulerEscalationTimers } from '../../adapters/event-bridge-scheduler-escalation-timers.js';
import { systemClock } from '../../core/ports.js';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { lambdaEscalationSchedule } from '../config.js';

let timers: RunDependencies['escalations'] | undefined;

/**
 * Arms card escalations as EventBridge Scheduler one-time schedules (the pausing function only).
 * The schedule's settings are read at the first step armed: a pause without a ladder needs none.
 */
export function awsEscalationTimers(): RunDependencies['escalations'] {
  return {
    arm: async (steps) => {
      if (steps.length === 0) return;
      timers ??= new EventBridgeSchedulerEscalationTimers({
        client: new SchedulerClient({}),
        ...lambdaEscalationSchedule(),
        clock: systemClock,
      });
      await timers.arm(steps);
    },
  };
}
