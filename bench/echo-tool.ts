/** The one-tool provider the in-process benches call (pipeline-cost, telemetry-cost). */
import { Injectable } from '@nestjs/common';
import { IsString } from 'class-validator';
import { Args, Tool } from 'nestjs-model-context';

export class EchoDto {
  @IsString()
  text!: string;
}

@Injectable()
export class EchoTools {
  @Tool({ description: 'Echo.' })
  echo(@Args() { text }: EchoDto): string {
    return text.length > 0 ? 'hello' : '';
  }
}
