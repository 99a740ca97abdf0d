import { Injectable, Logger } from '@nestjs/common';
import { IsInt, IsString, Length, Max, Min } from 'class-validator';
import { Observable } from 'rxjs';
import { Args, Emit, SchemaProperty, Tool } from 'nestjs-model-context';

export class BuildReportDto {
  @SchemaProperty({ description: 'The title printed on the report.' })
  @IsString()
  @Length(1, 100)
  title!: string;

  @SchemaProperty({ description: 'How many sections to build (one progress step each).' })
  @IsInt()
  @Min(1)
  @Max(100)
  sections!: number;
}

/**
 * A long-running tool written as an Observable: each emitted `Emit.progress(...)` becomes a
 * progress notification on the call's SSE stream (an `Emit.log(...)` a log message), the last
 * plain value is the result, and the teardown runs as soon as the client cancels or disconnects.
 */
@Injectable()
export class ReportTools {
  private readonly logger = new Logger(ReportTools.name);

  @Tool({
    title: 'Build a report',
    description: 'Build a report section by section (about 200 ms per section), reporting progress.',
    annotations: { readOnlyHint: true, openWorldHint: false },
  })
  buildReport(@Args() { title, sections }: BuildReportDto): Observable<unknown> {
    return new Observable((subscriber) => {
      let done = 0;
      const timer = setInterval(() => {
        done++;
        subscriber.next(Emit.progress(done, sections, `Section ${done} of ${sections}`));
        if (done === sections) {
          subscriber.next(Emit.log('info', `Report "${title}" built with ${sections} sections.`, 'reports'));
          subscriber.next({ title, sections, summary: `"${title}" has ${sections} sections.` });
          subscriber.complete();
        }
      }, 200);
      return () => {
        clearInterval(timer);
        if (done < sections)
          this.logger.log(`Report "${title}" cancelled after ${done}/${sections} sections; work stopped.`);
      };
    });
  }
}
