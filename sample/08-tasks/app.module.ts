import { Module } from '@nestjs/common';
import { McpModule } from 'nestjs-model-context';
import { InMemoryTaskStore } from 'nestjs-model-context/tasks';
import { ReportTools } from './report.tools.js';

/** The sample's task store, its own so that tests can watch the tasks change. */
export const REPORT_TASKS = new InMemoryTaskStore();

@Module({
  imports: [
    McpModule.forRoot({
      name: 'report-generator',
      version: '1.0.0',
      sessions: { mode: 'stateful' },
      // Tasks are kept one hour from their creation; clients are asked to poll every 500 ms.
      tasks: { store: REPORT_TASKS, ttlMs: 3_600_000, pollIntervalMs: 500 },
    }),
  ],
  providers: [ReportTools],
})
export class AppModule {}
