import { IsString, Matches } from 'class-validator';
import { SchemaProperty } from 'nestjs-model-context';

export class ShipOrderDto {
  @SchemaProperty({ description: 'The id of the open order to ship, e.g. A-1001.' })
  @IsString()
  @Matches(/^[A-Z]-\d{4}$/)
  id!: string;
}
