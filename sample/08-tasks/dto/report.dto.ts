import { IsBoolean, IsIn, IsOptional, IsString } from 'class-validator';

export class ReportDto {
  /** The quarter to report on. */
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
