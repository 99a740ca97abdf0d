import { Body, Controller, Get, HttpCode, HttpStatus, Post, Request } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { AuthUser } from './auth-user';
import { AuthService } from './auth.service';
import { LoginDto } from './dto/login.dto';
import { ProfileDto, TokenDto } from './dto/token.dto';
import { Public } from './public.decorator';

@ApiTags('auth')
@Controller({ path: 'auth', version: '1' })
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @Post('login')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Log in and get an access token' })
  @ApiOkResponse({ type: TokenDto })
  @ApiUnauthorizedResponse()
  login(@Body() dto: LoginDto): Promise<TokenDto> {
    return this.auth.login(dto.username, dto.password);
  }

  @Get('me')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'The logged-in user' })
  @ApiOkResponse({ type: ProfileDto })
  me(@Request() req: { user: AuthUser }): ProfileDto {
    return req.user;
  }
}
