import { Module } from '@nestjs/common';
import { McpModule } from 'nestjs-model-context';
import { ReportTools } from './reports.tools.js';

@Module({
  imports: [McpModule.forRoot({ name: 'reports', version: '1.0.0', keepAliveMs: 5000, explorer: true })],
  providers: [ReportTools],
})
export class AppModule {}
