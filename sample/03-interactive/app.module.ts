import { Module } from '@nestjs/common';
import { McpModule } from 'nestjs-model-context';
import { ProjectTools } from './projects.tools.js';

@Module({
  imports: [McpModule.forRoot({ name: 'projects', version: '1.0.0', explorer: true })],
  providers: [ProjectTools],
})
export class AppModule {}
