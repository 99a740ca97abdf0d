import { Controller, Get, Injectable, Module, NotFoundException } from '@nestjs/common';
import { IsOptional, IsString, Length } from 'class-validator';
import { Args, McpModule, Tool } from 'nestjs-model-context';

export class GreetDto {
  @IsString() @Length(1, 50) name: string;
  @IsOptional() @IsString() greeting?: string;
}

@Injectable()
export class GreetingTools {
  @Tool({ description: 'Greet someone.' })
  greet(@Args() { name, greeting }: GreetDto): string {
    if (name === 'nobody') throw new NotFoundException('Nobody to greet');
    return `${greeting ?? 'Hello'}, ${name}!`;
  }
}

@Controller()
export class AppController {
  @Get()
  getHello(): string {
    return 'Hello World!';
  }
}

@Module({
  imports: [McpModule.forRoot({ name: 'greeter', version: '1.0.0' })],
  controllers: [AppController],
  providers: [GreetingTools],
})
export class AppModule {}
