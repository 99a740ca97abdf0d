import { Injectable, NotFoundException } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Priority, type CreateTaskDto, type TaskDto } from './dto/task.dto.js';

/** The app's own service: nothing MCP-specific here. */
@Injectable()
export class TasksService {
  private readonly tasks = new Map<string, TaskDto>();

  create(input: CreateTaskDto): TaskDto {
    const task: TaskDto = {
      id: randomUUID(),
      title: input.title,
      priority: input.priority ?? Priority.Medium,
      tags: input.tags ?? [],
      done: false,
    };
    if (input.assignee) task.assignee = { name: input.assignee.name, email: input.assignee.email };
    this.tasks.set(task.id, task);
    return task;
  }

  list(filter: { done?: boolean; priority?: Priority } = {}): TaskDto[] {
    return [...this.tasks.values()].filter(
      (t) =>
        (filter.done === undefined || t.done === filter.done) &&
        (filter.priority === undefined || t.priority === filter.priority),
    );
  }

  get(id: string): TaskDto {
    const task = this.tasks.get(id);
    if (!task) throw new NotFoundException(`Task ${id} does not exist. Call list_tasks to see existing tasks.`);
    return task;
  }

  complete(id: string): TaskDto {
    const task = this.get(id);
    task.done = true;
    return task;
  }

  remove(id: string): void {
    this.get(id);
    this.tasks.delete(id);
  }
}
