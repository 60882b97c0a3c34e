package io.localmessage.spring.internal;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * A POST to the endpoint with no body and no Content-Type (what {@code curl -X POST} sends) goes on
 * as {@code {}} with {@code Content-Type: application/json}, so the endpoint answers with what is
 * missing. Any other request passes untouched. Not API.
 */
final class EmptyActionBodyFilter extends HttpFilter {
  private static final long serialVersionUID = 1L;
  private static final byte[] EMPTY_OBJECT = "{}".getBytes(StandardCharsets.UTF_8);

  @Override
  protected void doFilter(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    chain.doFilter(withoutBody(request) ? new EmptyJson(request) : request, response);
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    super.doFilter(request, response, chain);
  }

  private static boolean withoutBody(HttpServletRequest request) {
    return "POST".equals(request.getMethod())
        && request.getContentType() == null
        && request.getHeader("Transfer-Encoding") == null
        && request.getContentLengthLong() <= 0;
  }

  /** The request with an empty JSON object as its body. */
  private static final class EmptyJson extends HttpServletRequestWrapper {
    EmptyJson(HttpServletRequest request) {
      super(request);
    }

    @Override
    public String getContentType() {
      return "application/json";
    }

    @Override
    public int getContentLength() {
      return EMPTY_OBJECT.length;
    }

    @Override
    public long getContentLengthLong() {
      return EMPTY_OBJECT.length;
    }

    @Override
    public String getHeader(String name) {
      if ("Content-Type".equalsIgnoreCase(name)) {
        return getContentType();
      }
      if ("Content-Length".equalsIgnoreCase(name)) {
        return Integer.toString(EMPTY_OBJECT.length);
      }
      return super.getHeader(name);
    }

    @Override
    public Enumeration<String> getHeaders(String name) {
      String replaced = getHeader(name);
      if ("Content-Type".equalsIgnoreCase(name) || "Content-Length".equalsIgnoreCase(name)) {
        return Collections.enumeration(List.of(replaced));
      }
      return super.getHeaders(name);
    }

    @Override
    public Enumeration<String> getHeaderNames() {
      List<String> names = new ArrayList<>(Collections.list(super.getHeaderNames()));
      names.removeIf(
          n -> n.equalsIgnoreCase("Content-Type") || n.equalsIgnoreCase("Content-Length"));
      names.add("Content-Type");
      names.add("Content-Length");
      return Collections.enumeration(names);
    }

    @Override
    public ServletInputStream getInputStream() {
      ByteArrayInputStream in = new ByteArrayInputStream(EMPTY_OBJECT);
      return new ServletInputStream() {
        @Override
        public int read() {
          return in.read();
        }

        @Override
        public boolean isFinished() {
          return in.available() == 0;
        }

        @Override
        public boolean isReady() {
          return true;
        }

        @Override
        public void setReadListener(ReadListener listener) {
          throw new UnsupportedOperationException("synchronous body");
        }
      };
    }

    @Override
    public BufferedReader getReader() {
      return new BufferedReader(new InputStreamReader(getInputStream(), StandardCharsets.UTF_8));
    }
  }
}
