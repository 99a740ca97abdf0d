import { IsBoolean, IsIn, IsOptional, IsString } from 'class-validator';
import { SchemaProperty } from 'nestjs-model-context';

export class ReportDto {
  @SchemaProperty({
    description: 'The quarter of the current year to report on: Q1 (January to March) to Q4 (October to December).',
  })
  @IsIn(['Q1', 'Q2', 'Q3', 'Q4'])
  quarter!: 'Q1' | 'Q2' | 'Q3' | 'Q4';
}

/** What the approver answers. */
export class ApprovalDto {
  @IsBoolean()
  approve!: boolean;

  @IsOptional()
  @IsString()
  comment?: string;
}
