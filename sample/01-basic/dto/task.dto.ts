import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsEmail,
  IsEnum,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  ValidateNested,
} from 'class-validator';
import { SchemaProperty } from 'nestjs-model-context';

export enum Priority {
  Low = 'low',
  Medium = 'medium',
  High = 'high',
}

export class AssigneeDto {
  @SchemaProperty({ description: 'Full name of the person the task is for.' })
  @IsString()
  @Length(1, 80)
  name!: string;

  @SchemaProperty({ description: 'Email address the assignee is notified at.' })
  @IsEmail()
  email!: string;
}

/** A task as the tools return it (the output schema of create_task). */
export class TaskDto {
  @IsUUID()
  id!: string;

  @IsString()
  title!: string;

  @IsEnum(Priority)
  priority!: Priority;

  @IsArray()
  @IsString({ each: true })
  tags!: string[];

  @IsOptional()
  @ValidateNested()
  @Type(() => AssigneeDto)
  assignee?: AssigneeDto;

  @IsBoolean()
  done!: boolean;
}

export class CreateTaskDto {
  @SchemaProperty({ description: 'What has to be done, in a few words.' })
  @IsString()
  @Length(1, 200)
  title!: string;

  @SchemaProperty({ description: 'How urgent the task is; medium when left out.' })
  @IsOptional()
  @IsEnum(Priority)
  priority?: Priority;

  @SchemaProperty({ description: 'Free labels to group tasks by (at most 10).' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @IsString({ each: true })
  tags?: string[];

  @SchemaProperty({ description: 'Who the task is for; unassigned when left out.' })
  @IsOptional()
  @ValidateNested()
  @Type(() => AssigneeDto)
  assignee?: AssigneeDto;
}

export class TaskIdDto {
  @SchemaProperty({ description: 'The task id (a UUID) that create_task or list_tasks returned.' })
  @IsUUID()
  id!: string;
}

export class ListTasksDto {
  @SchemaProperty({ description: 'Only done tasks (true) or only open ones (false); all when left out.' })
  @IsOptional()
  @IsBoolean()
  done?: boolean;

  @SchemaProperty({ description: 'Only tasks of this priority; all when left out.' })
  @IsOptional()
  @IsEnum(Priority)
  priority?: Priority;
}
