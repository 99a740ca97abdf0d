import { IsString } from 'class-validator';
import { SchemaProperty } from 'nestjs-model-context';

export class PromptWithArgumentsDto {
  @SchemaProperty({ description: 'First test argument' })
  @IsString()
  arg1!: string;

  @SchemaProperty({ description: 'Second test argument' })
  @IsString()
  arg2!: string;
}

export class EmbeddedResourcePromptDto {
  @SchemaProperty({ description: 'URI of the resource to embed' })
  @IsString()
  resourceUri!: string;
}
