import { IsString, Matches } from 'class-validator';

export class ShipOrderDto {
  /** The order to ship, e.g. A-1001. */
  @IsString()
  @Matches(/^[A-Z]-\d{4}$/)
  id!: string;
}
