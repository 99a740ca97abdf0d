import { Injectable } from '@nestjs/common';
import { Args, Ctx, McpContext, Tool } from 'nestjs-model-context';
import { CreateTaskDto, ListTasksDto, TaskDto, TaskIdDto } from './dto/task.dto.js';
import { TasksService } from './tasks.service.js';

/** MCP tools over the existing TasksService: one decorator per method, DTOs as the schema. */
@Injectable()
export class TasksTools {
  constructor(private readonly tasks: TasksService) {}

  @Tool({
    title: 'Create a task',
    description: 'Create a task and return it.',
    output: TaskDto,
    annotations: { destructiveHint: false },
  })
  createTask(@Args() input: CreateTaskDto): TaskDto {
    return this.tasks.create(input);
  }

  @Tool({
    title: 'List tasks',
    description: 'List tasks, optionally filtered by status and priority.',
    annotations: { readOnlyHint: true },
  })
  listTasks(@Args() filter: ListTasksDto): { tasks: TaskDto[] } {
    return { tasks: this.tasks.list(filter) };
  }

  @Tool({ title: 'Get a task', description: 'Get one task by id.', annotations: { readOnlyHint: true } })
  getTask(@Args() { id }: TaskIdDto): TaskDto {
    return this.tasks.get(id);
  }

  @Tool({ title: 'Complete a task', description: 'Mark a task as done.', annotations: { idempotentHint: true } })
  completeTask(@Args() { id }: TaskIdDto): TaskDto {
    return this.tasks.complete(id);
  }

  @Tool({ title: 'Delete a task', description: 'Delete a task for good.', annotations: { destructiveHint: true } })
  deleteTask(@Args() { id }: TaskIdDto, @Ctx() ctx: McpContext): string {
    this.tasks.remove(id);
    return `Deleted task ${id} (asked by ${ctx.clientInfo?.name ?? 'an unnamed client'}).`;
  }
}
