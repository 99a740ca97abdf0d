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

export enum Priority {
  Low = 'low',
  Medium = 'medium',
  High = 'high',
}

export class AssigneeDto {
  @IsString()
  @Length(1, 80)
  name!: string;

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
  @IsString()
  @Length(1, 200)
  title!: string;

  @IsOptional()
  @IsEnum(Priority)
  priority?: Priority;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @IsString({ each: true })
  tags?: string[];

  @IsOptional()
  @ValidateNested()
  @Type(() => AssigneeDto)
  assignee?: AssigneeDto;
}

export class TaskIdDto {
  @IsUUID()
  id!: string;
}

export class ListTasksDto {
  @IsOptional()
  @IsBoolean()
  done?: boolean;

  @IsOptional()
  @IsEnum(Priority)
  priority?: Priority;
}
