import { IsBoolean, IsEmail, IsString } from 'class-validator';
import { SchemaProperty } from 'nestjs-model-context';

/** The form `test_elicitation` shows (2025 clients answer it on the call's stream). */
export class UserInfoDto {
  @SchemaProperty({ description: 'Your user name' })
  @IsString()
  username!: string;

  @SchemaProperty({ description: 'Your email address' })
  @IsEmail()
  email!: string;
}

export class NameDto {
  @SchemaProperty({ description: 'Your name' })
  @IsString()
  name!: string;
}

export class ColorDto {
  @SchemaProperty({ description: 'Your favourite colour' })
  @IsString()
  color!: string;
}

export class ConfirmDto {
  @SchemaProperty({ description: 'Confirm to continue' })
  @IsBoolean()
  ok!: boolean;
}

export class PromptContextDto {
  @SchemaProperty({ description: 'Extra context for the prompt' })
  @IsString()
  context!: string;
}
