import { Module } from '@nestjs/common';
import { McpModule } from 'nestjs-model-context';
import { TasksService } from './tasks.service.js';
import { TasksTools } from './tasks.tools.js';

@Module({
  imports: [
    McpModule.forRoot({
      name: 'task-tracker',
      version: '1.0.0',
      title: 'Task tracker',
      instructions: 'Manage a small task list: create, list, complete and delete tasks.',
    }),
  ],
  providers: [TasksService, TasksTools],
})
export class AppModule {}
